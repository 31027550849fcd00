package mount

import (
	"context"
	"sync"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// lazyDir is an open directory whose backing descriptor is opened on the
// first read. With FOPEN_CACHE_DIR the kernel answers most listings from
// its cache and never reads: find and ls -R then cost the daemon no
// open/close of the backing directory at all.
type lazyDir struct {
	open func() (fusefs.DirStream, syscall.Errno)

	mu sync.Mutex
	ds fusefs.DirStream
}

func (d *lazyDir) stream() (fusefs.DirStream, syscall.Errno) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ds == nil {
		ds, errno := d.open()
		if errno != 0 {
			return nil, errno
		}
		d.ds = ds
	}
	return d.ds, 0
}

var _ = (fusefs.FileReaddirenter)((*lazyDir)(nil))

func (d *lazyDir) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	ds, errno := d.stream()
	if errno != 0 {
		return nil, errno
	}
	if r, ok := ds.(fusefs.FileReaddirenter); ok {
		return r.Readdirent(ctx)
	}
	if !ds.HasNext() {
		return nil, 0
	}
	e, errno := ds.Next()
	return &e, errno
}

var _ = (fusefs.FileSeekdirer)((*lazyDir)(nil))

func (d *lazyDir) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	d.mu.Lock()
	unopened := d.ds == nil
	d.mu.Unlock()
	if unopened && off == 0 {
		return 0 // a fresh stream starts at 0 anyway
	}
	ds, errno := d.stream()
	if errno != 0 {
		return errno
	}
	if s, ok := ds.(fusefs.FileSeekdirer); ok {
		return s.Seekdir(ctx, off)
	}
	return syscall.ENOTSUP
}

var _ = (fusefs.FileReleasedirer)((*lazyDir)(nil))

func (d *lazyDir) Releasedir(ctx context.Context, flags uint32) {
	d.mu.Lock()
	ds := d.ds
	d.ds = nil
	d.mu.Unlock()
	if ds == nil {
		return
	}
	if r, ok := ds.(fusefs.FileReleasedirer); ok {
		r.Releasedir(ctx, flags)
		return
	}
	ds.Close()
}

var _ = (fusefs.FileFsyncdirer)((*lazyDir)(nil))

func (d *lazyDir) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	ds, errno := d.stream()
	if errno != 0 {
		return errno
	}
	if f, ok := ds.(fusefs.FileFsyncdirer); ok {
		return f.Fsyncdir(ctx, flags)
	}
	return 0
}
