package fs

import (
	"os"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// openBeneath opens the backing file rel with one openat2 call relative to
// the backing root, refusing any symlink on the way and any escape from the
// tree. It is the symlink safety of go-fuse's loopback open (which walks the
// path one component at a time) in one syscall instead of three, on the
// path every cat and grep takes. ENOSYS means the kernel has no openat2;
// the caller falls back to the loopback.
func (m *mountState) openBeneath(rel string, flags uint32) (fusefs.FileHandle, syscall.Errno) {
	if m.rootFd < 0 {
		return nil, syscall.ENOSYS
	}
	// As the loopback does: the kernel computes append offsets itself, and
	// FMODE_EXEC is not an open(2) flag.
	flags &^= syscall.O_APPEND | fuse.FMODE_EXEC
	for {
		fd, err := unix.Openat2(m.rootFd, rel, &unix.OpenHow{
			Flags:   uint64(flags) | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch err {
		case nil:
			return fusefs.NewLoopbackFileFromOS(os.NewFile(uintptr(fd), rel)), 0
		case unix.EINTR, unix.EAGAIN: // openat2 may ask to retry on a racing rename
			continue
		case unix.ENOSYS, unix.EPERM: // no openat2, or a seccomp filter refusing it
			return nil, syscall.ENOSYS
		}
		return nil, fusefs.ToErrno(err)
	}
}
