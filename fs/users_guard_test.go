package fs

import (
	"context"
	"slices"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// guardTest is a guard over a bridgeSpy, with alice and bob registered.
type guardTest struct {
	t     *testing.T
	g     *guard
	spy   *bridgeSpy
	users *fakeUsers
}

func newGuardTest(t *testing.T) *guardTest {
	users := &fakeUsers{infos: map[string]UserInfo{
		"alice": {ID: "alice", UID: aliceUID, GID: aliceUID, Dir: "/nonexistent/alice"},
		"bob":   {ID: "bob", UID: bobUID, GID: bobUID, Dir: "/nonexistent/bob"},
	}}
	r := &usersRoot{users: users, trees: map[string]*userTree{}}
	spy := &bridgeSpy{RawFileSystem: fuse.NewDefaultRawFileSystem()}
	g := newGuard(r)
	g.RawFileSystem = spy
	r.guard = g
	return &guardTest{t: t, g: g, spy: spy, users: users}
}

func cancelCh() <-chan struct{} { return make(chan struct{}) }

// lookup resolves a slash path from the root as uid; every step must pass.
func (gt *guardTest) lookup(uid uint32, names ...string) (uint64, fuse.EntryOut) {
	gt.t.Helper()
	id := uint64(fuse.FUSE_ROOT_ID)
	var out fuse.EntryOut
	for _, name := range names {
		out = fuse.EntryOut{}
		h := hdr(id, uid)
		if st := gt.g.Lookup(cancelCh(), &h, name, &out); !st.Ok() {
			gt.t.Fatalf("lookup %v as %d: %v", names, uid, st)
		}
		id = out.NodeId
	}
	gt.spy.reached("")
	return id, out
}

// TestGuardCallerUID: on a node of alice's tree, every request from a uid
// that is neither alice's nor root's is refused with EACCES before it
// reaches the bridge; alice and root pass; and what the guard answers
// names alice as the owner (her top 0700), whatever the bridge said.
func TestGuardCallerUID(t *testing.T) {
	gt := newGuardTest(t)
	top, topEntry := gt.lookup(aliceUID, "alice")
	dir, _ := gt.lookup(aliceUID, "alice", "user_memory")
	file, fileEntry := gt.lookup(aliceUID, "alice", "user_memory", "likes-tea.md")
	if topEntry.Attr.Owner != (fuse.Owner{Uid: aliceUID, Gid: aliceUID}) || topEntry.Attr.Mode&0o777 != 0o700 {
		t.Errorf("MNT/alice as looked up: owner %+v mode %o, want alice's and 0700", topEntry.Attr.Owner, topEntry.Attr.Mode&0o777)
	}
	if fileEntry.Attr.Owner != (fuse.Owner{Uid: aliceUID, Gid: aliceUID}) || fileEntry.Attr.Mode&0o777 != 0o644 {
		t.Errorf("a file of alice's as looked up: owner %+v mode %o, want alice's and 0644", fileEntry.Attr.Owner, fileEntry.Attr.Mode&0o777)
	}

	// Each request names the node it acts on; the result's owner, when it
	// has one, must be alice.
	type op struct {
		name string // what reaches the bridge
		do   func(h fuse.InHeader) (fuse.Status, *fuse.Owner)
	}
	ops := []op{
		{"lookup", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = dir
			var out fuse.EntryOut
			return gt.g.Lookup(cancelCh(), &h, "x.md", &out), &out.Attr.Owner
		}},
		{"getattr", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = file
			in := fuse.GetAttrIn{InHeader: h}
			var out fuse.AttrOut
			return gt.g.GetAttr(cancelCh(), &in, &out), &out.Attr.Owner
		}},
		{"setattr", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = file
			in := fuse.SetAttrIn{SetAttrInCommon: fuse.SetAttrInCommon{InHeader: h, Valid: fuse.FATTR_MODE, Mode: 0o600}}
			var out fuse.AttrOut
			return gt.g.SetAttr(cancelCh(), &in, &out), &out.Attr.Owner
		}},
		{"statx", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = file
			in := fuse.StatxIn{InHeader: h}
			var out fuse.StatxOut
			st := gt.g.Statx(cancelCh(), &in, &out)
			return st, &fuse.Owner{Uid: out.Uid, Gid: out.Gid}
		}},
		{"create", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = dir
			in := fuse.CreateIn{InHeader: h, Mode: 0o644}
			var out fuse.CreateOut
			return gt.g.Create(cancelCh(), &in, "new.md", &out), &out.Attr.Owner
		}},
		{"mkdir", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = dir
			in := fuse.MkdirIn{InHeader: h, Mode: 0o755}
			var out fuse.EntryOut
			return gt.g.Mkdir(cancelCh(), &in, "sub", &out), &out.Attr.Owner
		}},
		{"symlink", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = dir
			var out fuse.EntryOut
			return gt.g.Symlink(cancelCh(), &h, "/etc/passwd", "link", &out), &out.Attr.Owner
		}},
		{"unlink", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = dir
			return gt.g.Unlink(cancelCh(), &h, "likes-tea.md"), nil
		}},
		{"rmdir", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = top
			return gt.g.Rmdir(cancelCh(), &h, "user_memory"), nil
		}},
		{"rename", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = dir
			in := fuse.RenameIn{InHeader: h, Newdir: dir}
			return gt.g.Rename(cancelCh(), &in, "likes-tea.md", "likes-green-tea.md"), nil
		}},
		{"open", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = file
			in := fuse.OpenIn{InHeader: h, Flags: syscall.O_RDONLY}
			var out fuse.OpenOut
			return gt.g.Open(cancelCh(), &in, &out), nil
		}},
		{"read", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = file
			in := fuse.ReadIn{InHeader: h, Size: 10}
			_, st := gt.g.Read(cancelCh(), &in, make([]byte, 10))
			return st, nil
		}},
		{"write", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = file
			in := fuse.WriteIn{InHeader: h}
			_, st := gt.g.Write(cancelCh(), &in, []byte("x"))
			return st, nil
		}},
		{"opendir", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = dir
			in := fuse.OpenIn{InHeader: h}
			var out fuse.OpenOut
			return gt.g.OpenDir(cancelCh(), &in, &out), nil
		}},
		{"readdir", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = dir
			in := fuse.ReadIn{InHeader: h, Size: 4096}
			return gt.g.ReadDir(cancelCh(), &in, fuse.NewDirEntryList(make([]byte, 4096), 0)), nil
		}},
		{"getxattr", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = file
			_, st := gt.g.GetXAttr(cancelCh(), &h, "user.x", make([]byte, 64))
			return st, nil
		}},
		{"access", func(h fuse.InHeader) (fuse.Status, *fuse.Owner) {
			h.NodeId = file
			in := fuse.AccessIn{InHeader: h, Mask: 4}
			return gt.g.Access(cancelCh(), &in), nil
		}},
	}
	alice := fuse.Owner{Uid: aliceUID, Gid: aliceUID}
	for _, o := range ops {
		for _, c := range []struct {
			who  string
			uid  uint32
			want fuse.Status
		}{{"alice", aliceUID, fuse.OK}, {"root", 0, fuse.OK}, {"bob", bobUID, fuse.EACCES}} {
			gt.spy.reached("")
			st, owner := o.do(hdr(0, c.uid))
			if st != c.want {
				t.Errorf("%s as %s: %v, want %v", o.name, c.who, st, c.want)
			}
			if reached := gt.spy.reached(o.name); reached != c.want.Ok() {
				t.Errorf("%s as %s reached the bridge: %v, want %v", o.name, c.who, reached, c.want.Ok())
			}
			if c.want.Ok() && owner != nil && *owner != alice {
				t.Errorf("%s as %s answers owner %+v, want alice's %+v", o.name, c.who, *owner, alice)
			}
		}
	}

	// Owners are the daemon's to report: nobody chowns, not even root.
	for _, uid := range []uint32{aliceUID, 0} {
		in := fuse.SetAttrIn{SetAttrInCommon: fuse.SetAttrInCommon{InHeader: hdr(file, uid), Valid: fuse.FATTR_UID, Owner: fuse.Owner{Uid: bobUID}}}
		var out fuse.AttrOut
		if st := gt.g.SetAttr(cancelCh(), &in, &out); st != fuse.EPERM || gt.spy.reached("setattr") {
			t.Errorf("chown as %d: %v, want EPERM before the bridge", uid, st)
		}
	}
	// Never supported in a user's tree: O_TMPFILE (an unnamed file the
	// guard could not learn) and READDIRPLUS (entries the guard never saw).
	in := fuse.CreateIn{InHeader: hdr(dir, aliceUID)}
	if st := gt.g.Tmpfile(cancelCh(), &in, &fuse.CreateOut{}); st != fuse.Status(syscall.EOPNOTSUPP) {
		t.Errorf("tmpfile: %v", st)
	}
	rin := fuse.ReadIn{InHeader: hdr(dir, aliceUID)}
	if st := gt.g.ReadDirPlus(cancelCh(), &rin, fuse.NewDirEntryList(make([]byte, 4096), 0)); st != fuse.ENOSYS {
		t.Errorf("readdirplus: %v", st)
	}
}

// TestGuardAcrossUsers: a rename, hard link or copy_file_range from one
// user's tree into another's never reaches the bridge: EXDEV when the
// caller may use the source (its owner, or root), EACCES when it may not;
// the daemon's own .mindmount is root's alone.
func TestGuardAcrossUsers(t *testing.T) {
	gt := newGuardTest(t)
	aliceDir, _ := gt.lookup(aliceUID, "alice", "user_memory")
	aliceFile, _ := gt.lookup(aliceUID, "alice", "user_memory", "alice-secret.md")
	aliceTop, _ := gt.lookup(aliceUID, "alice")
	bobDir, _ := gt.lookup(bobUID, "bob", "user_memory")
	bobTop, _ := gt.lookup(bobUID, "bob")
	state, _ := gt.lookup(0, ".mindmount")

	rename := func(uid uint32, from, to uint64) fuse.Status {
		in := fuse.RenameIn{InHeader: hdr(from, uid), Newdir: to}
		return gt.g.Rename(cancelCh(), &in, "x.md", "x.md")
	}
	cases := []struct {
		name string
		do   func() fuse.Status
		op   string
		want fuse.Status
	}{
		{"alice renames her file into bob's directory", func() fuse.Status { return rename(aliceUID, aliceDir, bobDir) }, "rename", fuse.Status(syscall.EXDEV)},
		{"alice renames her directory to bob's top", func() fuse.Status { return rename(aliceUID, aliceTop, bobTop) }, "rename", fuse.Status(syscall.EXDEV)},
		{"alice renames bob's file into her directory", func() fuse.Status { return rename(aliceUID, bobDir, aliceDir) }, "rename", fuse.EACCES},
		{"bob renames alice's file into his directory", func() fuse.Status { return rename(bobUID, aliceDir, bobDir) }, "rename", fuse.EACCES},
		{"root renames alice's file into bob's directory", func() fuse.Status { return rename(0, aliceDir, bobDir) }, "rename", fuse.Status(syscall.EXDEV)},
		{"alice renames her file into the daemon's .mindmount", func() fuse.Status { return rename(aliceUID, aliceDir, state) }, "rename", fuse.Status(syscall.EXDEV)},
		{"alice renames her file to the mount's root", func() fuse.Status { return rename(aliceUID, aliceDir, fuse.FUSE_ROOT_ID) }, "rename", fuse.Status(syscall.EXDEV)},
		{"alice renames within her tree", func() fuse.Status { return rename(aliceUID, aliceDir, aliceTop) }, "rename", fuse.OK},
		{"alice links her file into bob's directory", func() fuse.Status {
			in := fuse.LinkIn{InHeader: hdr(bobDir, aliceUID), Oldnodeid: aliceFile}
			return gt.g.Link(cancelCh(), &in, "x.md", &fuse.EntryOut{})
		}, "link", fuse.EACCES},
		{"root links alice's file into bob's directory", func() fuse.Status {
			in := fuse.LinkIn{InHeader: hdr(bobDir, 0), Oldnodeid: aliceFile}
			return gt.g.Link(cancelCh(), &in, "x.md", &fuse.EntryOut{})
		}, "link", fuse.Status(syscall.EXDEV)},
		{"alice copies a range of her file into bob's", func() fuse.Status {
			in := fuse.CopyFileRangeIn{InHeader: hdr(aliceFile, aliceUID), NodeIdOut: bobDir}
			_, st := gt.g.CopyFileRange(cancelCh(), &in)
			return st
		}, "copyfilerange", fuse.Status(syscall.EXDEV)},
		{"alice reads the daemon's .mindmount", func() fuse.Status {
			in := fuse.GetAttrIn{InHeader: hdr(state, aliceUID)}
			return gt.g.GetAttr(cancelCh(), &in, &fuse.AttrOut{})
		}, "getattr", fuse.EACCES},
		{"root reads the daemon's .mindmount", func() fuse.Status {
			in := fuse.GetAttrIn{InHeader: hdr(state, 0)}
			return gt.g.GetAttr(cancelCh(), &in, &fuse.AttrOut{})
		}, "getattr", fuse.OK},
	}
	for _, tc := range cases {
		gt.spy.reached("")
		if st := tc.do(); st != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, syscall.Errno(st), syscall.Errno(tc.want))
		}
		if reached := gt.spy.reached(tc.op); reached != tc.want.Ok() {
			t.Errorf("%s: reached the bridge %v, want %v", tc.name, reached, tc.want.Ok())
		}
	}
}

// TestGuardFollowsRegistry: when a user's uid changes, the old uid loses
// the tree and the new one gets it (and is reported as owner); when the
// user is removed, only root may use what the kernel still holds of the
// tree.
func TestGuardFollowsRegistry(t *testing.T) {
	gt := newGuardTest(t)
	file, _ := gt.lookup(aliceUID, "alice", "user_memory", "likes-tea.md")
	getattr := func(uid uint32) (fuse.Status, fuse.Owner) {
		in := fuse.GetAttrIn{InHeader: hdr(file, uid)}
		var out fuse.AttrOut
		st := gt.g.GetAttr(cancelCh(), &in, &out)
		return st, out.Attr.Owner
	}
	const newUID = 42003
	gt.users.mu.Lock()
	gt.users.infos["alice"] = UserInfo{ID: "alice", UID: newUID, GID: newUID}
	gt.users.mu.Unlock()
	gt.g.refresh("alice")
	if st, _ := getattr(aliceUID); st != fuse.EACCES {
		t.Errorf("alice's old uid after the change: %v, want EACCES", st)
	}
	if st, owner := getattr(newUID); st != fuse.OK || owner.Uid != newUID {
		t.Errorf("alice's new uid: %v, owner %+v", st, owner)
	}
	gt.users.remove("alice")
	gt.g.refresh("alice")
	if st, _ := getattr(newUID); st != fuse.EACCES {
		t.Errorf("a removed user's uid: %v, want EACCES", st)
	}
	if st, _ := getattr(0); st != fuse.OK {
		t.Errorf("root on a removed user's node: %v", st)
	}
}

// TestUsersRootByCaller: the top of the mount reads the caller's uid from
// the request's context: another user's directory is EACCES, the daemon's
// .mindmount is not there for a user (ENOENT), the listing holds only what
// the caller may enter, and a request that carries no caller is refused.
func TestUsersRootByCaller(t *testing.T) {
	gt := newGuardTest(t)
	r := gt.g.root
	ctx := func(uid uint32) context.Context {
		return &fuse.Context{Caller: fuse.Caller{Owner: fuse.Owner{Uid: uid, Gid: uid}}, Cancel: cancelCh()}
	}
	for _, c := range []struct {
		uid  uint32
		name string
		want syscall.Errno
	}{
		{aliceUID, "bob", syscall.EACCES},
		{bobUID, "alice", syscall.EACCES},
		{aliceUID, ".mindmount", syscall.ENOENT},
		{aliceUID, "carol", syscall.ENOENT},
	} {
		if _, errno := r.Lookup(ctx(c.uid), c.name, &fuse.EntryOut{}); errno != c.want {
			t.Errorf("lookup %s as %d: %v, want %v", c.name, c.uid, errno, c.want)
		}
	}
	if _, errno := r.Lookup(context.Background(), "alice", &fuse.EntryOut{}); errno != syscall.EACCES {
		t.Errorf("lookup without a caller: %v, want EACCES", errno)
	}
	list := func(c context.Context) []string {
		ds, errno := r.Readdir(c)
		if errno != 0 {
			return []string{errno.Error()}
		}
		var names []string
		for ds.HasNext() {
			e, _ := ds.Next()
			names = append(names, e.Name)
		}
		return names
	}
	for _, c := range []struct {
		ctx  context.Context
		who  string
		want []string
	}{
		{ctx(aliceUID), "alice", []string{"alice"}},
		{ctx(bobUID), "bob", []string{"bob"}},
		{ctx(42999), "a stranger", nil},
		{ctx(0), "root", []string{".mindmount", "alice", "bob"}},
		{context.Background(), "no caller", []string{syscall.EACCES.Error()}},
	} {
		if got := list(c.ctx); !slices.Equal(got, c.want) {
			t.Errorf("listing as %s: %v, want %v", c.who, got, c.want)
		}
	}
}
