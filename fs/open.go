package fs

import (
	"os"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// openFd opens the backing file rel with one openat2 call relative to the
// backing root, refusing any symlink on the way and any escape from the
// tree: the symlink safety of go-fuse's loopback open (which walks the path
// one component at a time) in one syscall, on the path every read and
// write takes. Where the kernel has no openat2 (or a seccomp filter
// refuses it), the last component is still opened with O_NOFOLLOW.
func (m *mountState) openFd(rel string, flags int) (int, syscall.Errno) {
	flags |= unix.O_CLOEXEC
	if m.rootFd >= 0 && !m.noOpenat2.Load() {
		for {
			fd, err := unix.Openat2(m.rootFd, rel, &unix.OpenHow{
				Flags:   uint64(flags),
				Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
			})
			switch err {
			case nil:
				return fd, 0
			case unix.EINTR, unix.EAGAIN: // openat2 may ask to retry on a racing rename
				continue
			case unix.ENOSYS, unix.EPERM: // no openat2, or a seccomp filter refusing it
				m.noOpenat2.Store(true)
			default:
				return -1, toErrno(m.log, "open", err)
			}
			break
		}
	}
	fd, err := unix.Open(m.abs(rel), flags|unix.O_NOFOLLOW, 0)
	if err != nil {
		return -1, toErrno(m.log, "open", err)
	}
	return fd, 0
}

// openBeneath opens rel as a go-fuse file handle (the OpenEachFile read
// path). O_APPEND is dropped as the loopback drops it: appends are written
// by node.Write on a descriptor of their own.
func (m *mountState) openBeneath(rel string, flags uint32) (fusefs.FileHandle, syscall.Errno) {
	flags &^= syscall.O_APPEND | fuse.FMODE_EXEC
	fd, errno := m.openFd(rel, int(flags))
	if errno != 0 {
		return nil, errno
	}
	return fusefs.NewLoopbackFileFromOS(os.NewFile(uintptr(fd), rel)), 0
}
