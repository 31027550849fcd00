package mount

import (
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// rawFS sits between the kernel and go-fuse's node bridge for one reason:
// a WRITE carries the writer's open flags (fuse_write_in.flags), and
// go-fuse's node API drops them. Without OPEN (see node.Open) a write has no
// handle that remembers O_APPEND, so the flag is looked up here and handed
// to node.Write keyed by the request's cancel channel, which is unique
// while the request is in flight.
type rawFS struct {
	fuse.RawFileSystem
	appends *appendRequests // the mount's (mountState.appends); nil: none
}

// appendRequests remembers which in-flight WRITE requests come from a
// descriptor opened with O_APPEND.
type appendRequests struct {
	mu sync.Mutex
	in map[<-chan struct{}]bool
}

func (a *appendRequests) mark(cancel <-chan struct{}) {
	a.mu.Lock()
	if a.in == nil {
		a.in = map[<-chan struct{}]bool{}
	}
	a.in[cancel] = true
	a.mu.Unlock()
}

func (a *appendRequests) done(cancel <-chan struct{}) {
	a.mu.Lock()
	delete(a.in, cancel)
	a.mu.Unlock()
}

// is reports whether the request with this cancel channel appends.
func (a *appendRequests) is(cancel <-chan struct{}) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.in[cancel]
}

func (r *rawFS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	if in.Flags&syscall.O_APPEND != 0 && r.appends != nil {
		r.appends.mark(cancel)
		defer r.appends.done(cancel)
	}
	return r.RawFileSystem.Write(cancel, in, data)
}

func (r *rawFS) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	if in.Flags&syscall.O_APPEND != 0 && r.appends != nil {
		r.appends.mark(cancel)
		defer r.appends.done(cancel)
	}
	return r.RawFileSystem.Writev(cancel, in, data)
}

// GetAttr and Lookup hand out the attributes of synthesized files with a
// validity of zero, which go-fuse's node API cannot express (zero means
// "the mount default" there). The kernel then asks again before every
// read, and a changed size or mtime drops the pages it cached
// (FUSE_AUTO_INVAL_DATA): read-after-write of the indexes without OPEN.
// A nanosecond is not enough: the kernel rounds it up to a jiffy.
func (r *rawFS) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	st := r.RawFileSystem.GetAttr(cancel, in, out)
	if st.Ok() && isSynthIno(out.Ino) {
		out.AttrValid, out.AttrValidNsec = 0, 0
	}
	return st
}

func (r *rawFS) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	st := r.RawFileSystem.Lookup(cancel, h, name, out)
	if st.Ok() && isSynthIno(out.Ino) {
		out.AttrValid, out.AttrValidNsec = 0, 0
	}
	return st
}

// isSynthIno reports whether ino is one of the daemon's virtual files
// (synthInoBase and above; backing inode numbers never reach bit 62).
func isSynthIno(ino uint64) bool { return ino&synthInoBase != 0 }
