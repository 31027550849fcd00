package mount

import (
	"context"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"
)

// The work tree's size limit at the mount: every operation that can make a
// file longer asks the tracker's size rule first (tracker.Grow and its
// kin), and a refusal is ENOSPC (toErrno): nothing of the refused write
// lands. WRITE and SETATTR ask in node_io.go and node_write.go; the two
// below would otherwise grow a file past it without a WRITE.

// room asks the size rule for a write of n bytes at off (appending: at the
// end of the file).
func (m *mountState) room(rel string, off, n int64, appending bool) error {
	if appending {
		return m.tracker.AppendRoom(rel, n)
	}
	return m.tracker.Grow(rel, off+n)
}

var _ = (fusefs.NodeAllocater)((*node)(nil))

// Allocate (fallocate(2)) asks the size rule for the end of the range
// unless the size stays (FALLOC_FL_KEEP_SIZE, punching a hole), then lets
// the open file do it.
func (n *node) Allocate(ctx context.Context, f fusefs.FileHandle, off, size uint64, mode uint32) syscall.Errno {
	rel, ok := n.rel()
	if !ok {
		return toErrno(n.m.log, "", errGone)
	}
	if err := n.m.writable(rel); err != nil {
		return toErrno(n.m.log, "fallocate "+rel, err)
	}
	if mode&(unix.FALLOC_FL_KEEP_SIZE|unix.FALLOC_FL_PUNCH_HOLE) == 0 {
		if err := n.m.tracker.Grow(rel, int64(off+size)); err != nil {
			return toErrno(n.m.log, "fallocate "+rel, err)
		}
	}
	a, ok := unwrapHandle(f).(fusefs.FileAllocater)
	if !ok {
		return syscall.EOPNOTSUPP
	}
	errno := a.Allocate(ctx, off, size, mode)
	if errno == 0 {
		n.m.wrote(rel, n.m.callers.of(ctx))
	}
	return errno
}

var _ = (fusefs.NodeCopyFileRanger)((*node)(nil))

// CopyFileRange (copy_file_range(2)) answers ENOTSUP: the kernel then
// copies with READs and WRITEs, each of which the size rule and the
// write policy see.
func (n *node) CopyFileRange(ctx context.Context, fhIn fusefs.FileHandle, offIn uint64, out *fusefs.Inode, fhOut fusefs.FileHandle, offOut uint64, size uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.ENOTSUP
}

// unwrapHandle returns the loopback file under one of our handles.
func unwrapHandle(f fusefs.FileHandle) fusefs.FileHandle {
	switch h := f.(type) {
	case *handle:
		return h.LoopbackFile
	case handleNoPassthrough:
		return h.LoopbackFile
	}
	return f
}
