package mount

import (
	"os"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// openFd opens the backing file rel beneath the backing root (subtree:
// one openat2 call, no symlink on the way, no escape from the tree): the
// symlink safety of go-fuse's loopback open (which walks the path one
// component at a time) on the path every read and write takes.
func (m *mountState) openFd(rel string, flags int) (int, syscall.Errno) {
	if m.tree == nil {
		return -1, syscall.EIO
	}
	fd, err := m.tree.OpenFd(rel, flags, 0)
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
