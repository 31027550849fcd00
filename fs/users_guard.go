package fs

import (
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// guard stands in front of go-fuse's bridge in a multi-user mount and
// enforces isolation from each request's credentials, whatever the
// kernel's permission options: every request on a node below MNT/<id> from
// a uid that is neither root nor the user's fails with EACCES, and every
// attribute it returns names the user as owner (the top 0700). It learns
// which user a node belongs to from the replies that introduce node IDs
// (LOOKUP, CREATE, MKDIR, ...): a child belongs to its parent's user, a
// child of the root to the user it is named after. go-fuse never reuses a
// node ID, so a forgotten ID cannot come back as someone else's.
type guard struct {
	fuse.RawFileSystem
	root *usersRoot

	mu    sync.RWMutex
	nodes map[uint64]guardEntry
}

// guardEntry is what the guard knows of one node ID.
type guardEntry struct {
	user     string // "" for the daemon's own MNT/.mindmount (root only)
	uid, gid uint32
	top      bool // MNT/<id> itself
	tree     *userTree
}

func newGuard(r *usersRoot) *guard {
	return &guard{root: r, nodes: map[uint64]guardEntry{}}
}

// entry returns what the guard knows of node id; ok=false for the root
// and for nodes it never saw (which then are the root's own).
func (g *guard) entry(id uint64) (guardEntry, bool) {
	g.mu.RLock()
	e, ok := g.nodes[id]
	g.mu.RUnlock()
	return e, ok
}

// check refuses a request on node id from a caller that may not use it.
func (g *guard) check(h *fuse.InHeader) (guardEntry, fuse.Status) {
	e, ok := g.entry(h.NodeId)
	if !ok {
		return e, fuse.OK
	}
	if h.Caller.Uid == 0 {
		return e, fuse.OK
	}
	if e.user == "" || h.Caller.Uid != e.uid {
		return e, fuse.EACCES
	}
	return e, fuse.OK
}

// learn records the node a reply introduced, as a child of parent named
// name.
func (g *guard) learn(parent uint64, name string, out *fuse.EntryOut) {
	if out.NodeId == 0 {
		return // a negative entry
	}
	var e guardEntry
	if parent == fuse.FUSE_ROOT_ID {
		if name == "." || name == ".." {
			return
		}
		g.root.mu.Lock()
		t := g.root.trees[name]
		g.root.mu.Unlock()
		if u, ok := g.root.users.Lookup(name); ok {
			e = guardEntry{user: u.ID, uid: u.UID, gid: u.GID, top: true, tree: t}
		} // else .mindmount: user "" (root only)
	} else {
		p, ok := g.entry(parent)
		if !ok {
			return
		}
		e = p
		e.top = false
	}
	g.mu.Lock()
	g.nodes[out.NodeId] = e
	g.mu.Unlock()
	g.own(e, &out.Attr)
}

// own makes attributes of a user's node name the user as owner.
func (g *guard) own(e guardEntry, a *fuse.Attr) {
	if e.user == "" {
		return
	}
	a.Owner = fuse.Owner{Uid: e.uid, Gid: e.gid}
	if e.top {
		a.Mode = a.Mode&syscall.S_IFMT | 0o700
	}
}

func (g *guard) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	if _, st := g.check(h); !st.Ok() {
		return st
	}
	st := g.RawFileSystem.Lookup(cancel, h, name, out)
	if st.Ok() {
		if out.NodeId == 0 && h.NodeId == fuse.FUSE_ROOT_ID {
			// An unknown user: the kernel must ask again, a user may be
			// added any moment.
			out.SetEntryTimeout(0)
		}
		g.learn(h.NodeId, name, out)
	}
	return st
}

func (g *guard) Forget(nodeid, nlookup uint64) {
	g.mu.Lock()
	delete(g.nodes, nodeid)
	g.mu.Unlock()
	g.RawFileSystem.Forget(nodeid, nlookup)
}

func (g *guard) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	e, st := g.check(&in.InHeader)
	if !st.Ok() {
		return st
	}
	st = g.RawFileSystem.GetAttr(cancel, in, out)
	g.own(e, &out.Attr)
	return st
}

func (g *guard) SetAttr(cancel <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	e, st := g.check(&in.InHeader)
	if !st.Ok() {
		return st
	}
	if e.user != "" && in.Valid&(fuse.FATTR_UID|fuse.FATTR_GID) != 0 {
		return fuse.EPERM // owners are the daemon's to report
	}
	st = g.RawFileSystem.SetAttr(cancel, in, out)
	g.own(e, &out.Attr)
	return st
}

func (g *guard) Mknod(cancel <-chan struct{}, in *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	st := g.RawFileSystem.Mknod(cancel, in, name, out)
	if st.Ok() {
		g.learn(in.NodeId, name, out)
	}
	return st
}

func (g *guard) Mkdir(cancel <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	st := g.RawFileSystem.Mkdir(cancel, in, name, out)
	if st.Ok() {
		g.learn(in.NodeId, name, out)
	}
	return st
}

func (g *guard) Unlink(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	if _, st := g.check(h); !st.Ok() {
		return st
	}
	return g.RawFileSystem.Unlink(cancel, h, name)
}

func (g *guard) Rmdir(cancel <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	if _, st := g.check(h); !st.Ok() {
		return st
	}
	return g.RawFileSystem.Rmdir(cancel, h, name)
}

// Rename stays within one user's tree: across users it is EXDEV, as
// between two file systems.
func (g *guard) Rename(cancel <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	from, st := g.check(&in.InHeader)
	if !st.Ok() {
		return st
	}
	to, _ := g.entry(in.Newdir)
	if from.user != to.user || from.user == "" {
		return fuse.Status(syscall.EXDEV)
	}
	return g.RawFileSystem.Rename(cancel, in, oldName, newName)
}

func (g *guard) Link(cancel <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	from, st := g.check(&in.InHeader)
	if !st.Ok() {
		return st
	}
	if to, _ := g.entry(in.Oldnodeid); to.user != from.user || from.user == "" {
		return fuse.Status(syscall.EXDEV)
	}
	st = g.RawFileSystem.Link(cancel, in, name, out)
	if st.Ok() {
		g.learn(in.NodeId, name, out)
	}
	return st
}

func (g *guard) Symlink(cancel <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	if _, st := g.check(h); !st.Ok() {
		return st
	}
	st := g.RawFileSystem.Symlink(cancel, h, target, name, out)
	if st.Ok() {
		g.learn(h.NodeId, name, out)
	}
	return st
}

func (g *guard) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	if _, st := g.check(h); !st.Ok() {
		return nil, st
	}
	return g.RawFileSystem.Readlink(cancel, h)
}

func (g *guard) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.Access(cancel, in)
}

func (g *guard) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	if _, st := g.check(h); !st.Ok() {
		return 0, st
	}
	return g.RawFileSystem.GetXAttr(cancel, h, attr, dest)
}

func (g *guard) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	if _, st := g.check(h); !st.Ok() {
		return 0, st
	}
	return g.RawFileSystem.ListXAttr(cancel, h, dest)
}

func (g *guard) SetXAttr(cancel <-chan struct{}, in *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.SetXAttr(cancel, in, attr, data)
}

func (g *guard) RemoveXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string) fuse.Status {
	if _, st := g.check(h); !st.Ok() {
		return st
	}
	return g.RawFileSystem.RemoveXAttr(cancel, h, attr)
}

func (g *guard) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	st := g.RawFileSystem.Create(cancel, in, name, out)
	if st.Ok() {
		g.learn(in.NodeId, name, &out.EntryOut)
	}
	return st
}

func (g *guard) Tmpfile(cancel <-chan struct{}, in *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	return fuse.Status(syscall.EOPNOTSUPP)
}

func (g *guard) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.Open(cancel, in, out)
}

func (g *guard) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return nil, st
	}
	return g.RawFileSystem.Read(cancel, in, buf)
}

func (g *guard) Lseek(cancel <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.Lseek(cancel, in, out)
}

func (g *guard) GetLk(cancel <-chan struct{}, in *fuse.LkIn, out *fuse.LkOut) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.GetLk(cancel, in, out)
}

func (g *guard) SetLk(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.SetLk(cancel, in)
}

func (g *guard) SetLkw(cancel <-chan struct{}, in *fuse.LkIn) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.SetLkw(cancel, in)
}

// rawFor is the single-repository mount's request layer for the user's
// tree (it tells appends apart), in front of the bridge.
func (g *guard) rawFor(e guardEntry) fuse.RawFileSystem {
	if e.tree == nil {
		if e.user == "" {
			return g.RawFileSystem
		}
		g.root.mu.Lock()
		e.tree = g.root.trees[e.user]
		g.root.mu.Unlock()
		if e.tree == nil {
			return g.RawFileSystem
		}
	}
	return &rawFS{RawFileSystem: g.RawFileSystem, appends: &e.tree.m.appends}
}

func (g *guard) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	e, st := g.check(&in.InHeader)
	if !st.Ok() {
		return 0, st
	}
	return g.rawFor(e).Write(cancel, in, data)
}

func (g *guard) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	e, st := g.check(&in.InHeader)
	if !st.Ok() {
		return 0, st
	}
	return g.rawFor(e).Writev(cancel, in, data)
}

func (g *guard) CopyFileRange(cancel <-chan struct{}, in *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	from, st := g.check(&in.InHeader)
	if !st.Ok() {
		return 0, st
	}
	if to, _ := g.entry(in.NodeIdOut); to.user != from.user {
		return 0, fuse.Status(syscall.EXDEV)
	}
	return g.RawFileSystem.CopyFileRange(cancel, in)
}

func (g *guard) Ioctl(cancel <-chan struct{}, in *fuse.IoctlIn, inbuf []byte, out *fuse.IoctlOut, outbuf []byte) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.Ioctl(cancel, in, inbuf, out, outbuf)
}

func (g *guard) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.Flush(cancel, in)
}

func (g *guard) Fsync(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.Fsync(cancel, in)
}

func (g *guard) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.Fallocate(cancel, in)
}

func (g *guard) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.OpenDir(cancel, in, out)
}

func (g *guard) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.ReadDir(cancel, in, out)
}

// ReadDirPlus is off for this mount (DisableReadDirPlus); refused rather
// than let entries in unlearned.
func (g *guard) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return fuse.ENOSYS
}

func (g *guard) FsyncDir(cancel <-chan struct{}, in *fuse.FsyncIn) fuse.Status {
	if _, st := g.check(&in.InHeader); !st.Ok() {
		return st
	}
	return g.RawFileSystem.FsyncDir(cancel, in)
}

func (g *guard) StatFs(cancel <-chan struct{}, h *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	if _, st := g.check(h); !st.Ok() {
		return st
	}
	return g.RawFileSystem.StatFs(cancel, h, out)
}

func (g *guard) Statx(cancel <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	e, st := g.check(&in.InHeader)
	if !st.Ok() {
		return st
	}
	st = g.RawFileSystem.Statx(cancel, in, out)
	if st.Ok() && e.user != "" {
		out.Uid, out.Gid = e.uid, e.gid
		if e.top {
			out.Mode = out.Mode&syscall.S_IFMT | 0o700
		}
	}
	return st
}

// refresh brings the guard's entries of user id in step with the registry:
// a new uid or gid, or, for a removed user, root only.
func (g *guard) refresh(id string) {
	u, ok := g.root.users.Lookup(id)
	g.mu.Lock()
	defer g.mu.Unlock()
	for n, e := range g.nodes {
		if e.user != id {
			continue
		}
		if ok {
			e.uid, e.gid = u.UID, u.GID
		} else {
			e.user, e.tree = "", nil
		}
		g.nodes[n] = e
	}
}
