package mount

import (
	"context"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// The read path without OPEN. node.Open answers ENOSYS, so the
// kernel (FUSE_NO_OPEN_SUPPORT) stops sending OPEN for good and treats
// every file as FOPEN_KEEP_CACHE: a warm cat or grep -r is served from the
// page cache without a single request. Reads and writes then arrive without
// a handle and are served here by opening the backing file beneath the root
// for the one call. Files made by CREATE keep the handle CREATE returned.
//
// The policy moves with it: nothing refuses an open any more, so the
// operations that change data refuse instead (Write here, Setattr, Create,
// Rename, Unlink, Link, Mknod in node_write.go), and read_only memories
// are reported as mode 0444 so careful tools refuse early.

var _ = (fusefs.NodeReader)((*node)(nil))

// Read reads through the handle when there is one, else straight from the
// backing file.
func (n *node) Read(ctx context.Context, f fusefs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n.noteRead(off) // skilluse.go
	if r, ok := f.(fusefs.FileReader); ok {
		return r.Read(ctx, dest, off)
	}
	rel, ok := n.rel()
	if !ok {
		return nil, toErrno(n.m.log, "", errGone)
	}
	if n.m.fw != nil {
		if res, staged, errno := n.m.fwRead(rel, dest, off); staged {
			return res, errno
		}
	}
	fd, errno := n.m.openFd(rel, syscall.O_RDONLY)
	if errno != 0 {
		return nil, errno
	}
	defer unix.Close(fd)
	k, err := unix.Pread(fd, dest, off)
	if err != nil {
		return nil, toErrno(n.m.log, "read", err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

var _ = (fusefs.NodeWriter)((*node)(nil))

// Write refuses under .git (EROFS) and on read_only memories (EPERM), then
// writes. An append (the writer's descriptor has O_APPEND, which a WRITE
// carries) lands at the end of the file as the disk has it, whatever size
// the kernel cached: the backing descriptor is opened with O_APPEND, and
// Linux's pwrite appends on such a descriptor whatever the offset. When
// the kernel's idea of the end was stale (someone appended beside the
// mount), its caches of the file are dropped, off the request path.
func (n *node) Write(ctx context.Context, f fusefs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	rel, ok := n.rel()
	if !ok {
		return 0, toErrno(n.m.log, "", errGone)
	}
	if err := n.m.writable(rel); err != nil {
		return 0, toErrno(n.m.log, "write "+rel, err)
	}
	appending := n.m.isAppend(ctx)
	if n.m.fw != nil {
		return n.m.fwWrite(rel, data, off, appending)
	}
	if err := n.m.room(rel, off, int64(len(data)), appending); err != nil {
		return 0, toErrno(n.m.log, "write "+rel, err)
	}
	var written uint32
	if w, ok := f.(fusefs.FileWriter); ok && !appending {
		var errno syscall.Errno
		if written, errno = w.Write(ctx, data, off); errno != 0 {
			return written, errno
		}
	} else {
		flags := syscall.O_WRONLY
		if appending {
			flags |= syscall.O_APPEND
		}
		fd, errno := n.m.openFd(rel, flags)
		if errno != 0 {
			return 0, errno
		}
		k, err := unix.Pwrite(fd, data, off)
		if err == nil && appending {
			var st unix.Stat_t
			if unix.Fstat(fd, &st) == nil && st.Size-int64(k) != off {
				n.m.inval.pathsLater([]string{rel}) // the kernel's size was stale
			}
		}
		unix.Close(fd)
		if err != nil {
			return 0, toErrno(n.m.log, "write "+rel, err)
		}
		written = uint32(k)
	}
	n.m.wrote(rel, n.m.callers.of(ctx))
	return written, 0
}

var _ = (fusefs.NodeFlusher)((*node)(nil))

// Flush answers ENOSYS for a descriptor without a handle: the kernel then
// stops sending FLUSH on close, which would otherwise cost a round trip per
// cat. Changes were already noted at WRITE and SETATTR.
func (n *node) Flush(ctx context.Context, f fusefs.FileHandle) syscall.Errno {
	if fl, ok := f.(fusefs.FileFlusher); ok {
		return fl.Flush(ctx)
	}
	if n.m.fw != nil {
		if rel, ok := n.rel(); ok {
			return n.m.fwFlush(ctx, rel)
		}
	}
	if f == nil && !n.m.keepFlush {
		return syscall.ENOSYS
	}
	return 0
}

var _ = (fusefs.NodeFsyncer)((*node)(nil))

// Fsync syncs the backing file (editors fsync before they rename).
func (n *node) Fsync(ctx context.Context, f fusefs.FileHandle, flags uint32) syscall.Errno {
	if fs, ok := f.(fusefs.FileFsyncer); ok {
		return fs.Fsync(ctx, flags)
	}
	rel, ok := n.rel()
	if !ok {
		return toErrno(n.m.log, "", errGone)
	}
	fd, errno := n.m.openFd(rel, syscall.O_RDONLY)
	if errno != 0 {
		return errno
	}
	defer unix.Close(fd)
	return toErrno(n.m.log, "fsync", unix.Fsync(fd))
}

var _ = (fusefs.NodeLseeker)((*node)(nil))

// Lseek (SEEK_DATA, SEEK_HOLE) goes to the handle when there is one; ENOSYS
// otherwise makes the kernel answer it itself from the file size.
func (n *node) Lseek(ctx context.Context, f fusefs.FileHandle, off uint64, whence uint32) (uint64, syscall.Errno) {
	if ls, ok := f.(fusefs.FileLseeker); ok {
		return ls.Lseek(ctx, off, whence)
	}
	return 0, syscall.ENOSYS
}

// isAppend reports whether the WRITE being served came from a descriptor
// opened with O_APPEND (see rawFS).
func (m *mountState) isAppend(ctx context.Context) bool {
	fc, ok := ctx.(*fuse.Context)
	return ok && fc.Cancel != nil && m.appends.is(fc.Cancel)
}
