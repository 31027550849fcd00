package fs

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mindmount/mindmount/memgraph"
)

// Users is what the multi-user mount needs of the daemon (mindmount serve's
// host): who the users are, and each user's repository on demand.
type Users interface {
	// List returns every user.
	List() []UserInfo
	// Lookup returns user id without loading it; ok=false for an unknown
	// user.
	Lookup(id string) (UserInfo, bool)
	// Acquire loads user id and returns its repository until release.
	Acquire(ctx context.Context, id string) (*UserRepo, func(), error)
	// Status renders the daemon's report, MNT/.mindmount/status.
	Status() []byte
}

// UserInfo is one user of a multi-user mount.
type UserInfo struct {
	ID       string
	UID, GID uint32
	Dir      string // the user's repository
}

// UsersOptions configure a multi-user mount. AllowOther is implied: the
// point is that each user's processes (and containers) reach their own
// directory.
type UsersOptions struct {
	Options
	// Root is the directory holding the users' repositories; the
	// mountpoint may not be inside it.
	Root string
	// NoKernelChecks leaves the permission checks to the daemon alone (no
	// default_permissions mount option). The daemon refuses foreign uids
	// either way; tests use it to show that its own check holds.
	NoKernelChecks bool
}

// Inode numbers of the multi-user mount's own nodes: the users root's
// .mindmount and status file, and each user's directory (n<<4), far from the
// backing inodes and, with bit 59, from every user's virtual files (whose
// salt is n<<20).
const (
	usersInoBase      = synthInoBase | 1<<59
	usersStateDirIno  = usersInoBase | 1
	usersStatusIno    = usersInoBase | 2
	userInoBrokenDir  = 3
	userInoBrokenStat = 4
	userInoBrokenFile = 5
)

// UsersServer is a mounted multi-user tree: MNT/<id>/ is what mindmount mount
// shows for that user's repository.
type UsersServer struct {
	srv  *fuse.Server
	root *usersRoot
	mnt  string
}

// Server is the FUSE server (Wait returns when the mount is gone, also
// when it was unmounted from outside).
func (s *UsersServer) Server() *fuse.Server { return s.srv }

// Unmount unmounts the tree (see Unmount).
func (s *UsersServer) Unmount() error { return Unmount(s.srv, s.mnt) }

// Changed tells the mount that user id was added, removed or changed in
// the registry: the kernel's cached entry (or cached absence) of MNT/<id>
// is dropped, and a removed user's subtree is detached.
func (s *UsersServer) Changed(id string) { s.root.changed(id) }

// Loaded tells the mount that user id was loaded by any front, so that
// commits made elsewhere (HTTP, consolidation) drop the kernel's caches of
// the user's subtree at once.
func (s *UsersServer) Loaded(id string) { s.root.loaded(id) }

// MountUsers mounts a tree of every user at mountpoint: MNT/<id>/ for each
// user (owned by the user's uid and gid, mode 0700, refused to every other
// uid but root), and MNT/.mindmount/status for root. It returns once the mount
// is usable.
func MountUsers(mountpoint string, users Users, opt UsersOptions) (*UsersServer, error) {
	log := opt.Logger
	if log == nil {
		log = slog.Default()
	}
	opt.Logger = log
	mnt, err := filepath.Abs(mountpoint)
	if err != nil {
		return nil, err
	}
	root0, err := filepath.Abs(opt.Root)
	if err != nil {
		return nil, err
	}
	if err := preflight(root0, mnt, UsersAllowOther); err != nil {
		return nil, err
	}
	root := &usersRoot{users: users, opt: opt, log: log, started: time.Now(), trees: map[string]*userTree{}}
	root.guard = newGuard(root)
	root.sandboxes = newSandboxes()
	fopts := fuseOptions(fuseConfig{
		fsName:     "mindmount-serve",
		allowOther: true,
		// The kernel checks mode bits too (the daemon reports each user's
		// tree as theirs, its top 0700); the daemon's guard holds without.
		kernelChecks: !opt.NoKernelChecks,
		debug:        opt.Debug,
		cacheTimeout: opt.CacheTimeout,
		log:          log,
	})
	root.guard.RawFileSystem = fusefs.NewNodeFS(root, fopts)
	srv, err := serve(mnt, root.guard, &fopts.MountOptions)
	if err != nil {
		return nil, explainMountError(mnt, err)
	}
	go func() {
		srv.Wait()
		root.shutdown()
	}()
	return &UsersServer{srv: srv, root: root, mnt: mnt}, nil
}

// usersRoot is the top of a multi-user mount: one directory per user.
type usersRoot struct {
	fusefs.Inode
	users     Users
	opt       UsersOptions
	log       *slog.Logger
	started   time.Time
	guard     *guard
	sandboxes *sandboxes

	mu    sync.Mutex
	trees map[string]*userTree
	next  uint64 // salt counter of user subtrees
}

// userTree is one user's subtree: the single-repository mount's state and
// nodes, projected through a proxy that loads the user on demand.
type userTree struct {
	info  UserInfo
	m     *mountState
	proxy *userProxy
	in    *fusefs.Inode
}

var _ = (fusefs.NodeGetattrer)((*usersRoot)(nil))

func (r *usersRoot) Getattr(ctx context.Context, fh fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	r.fill(&out.Attr, 0o755|syscall.S_IFDIR, fuse.Owner{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())})
	return 0
}

func (r *usersRoot) fill(a *fuse.Attr, mode uint32, owner fuse.Owner) {
	a.Mode = mode
	a.Nlink = 1
	if mode&syscall.S_IFDIR != 0 {
		a.Nlink = 2
	}
	a.Owner = owner
	t := r.started
	a.SetTimes(&t, &t, &t)
}

// callerUID is the uid of the process behind a request; ok=false when the
// kernel did not say.
func callerUID(ctx context.Context) (uint32, bool) {
	c, ok := fuse.FromContext(ctx)
	if !ok || c == nil {
		return 0, false
	}
	return c.Uid, true
}

// mayEnter reports whether a caller with uid may use user u's directory:
// root and the user, nobody else.
func mayEnter(uid uint32, u UserInfo) bool { return uid == 0 || uid == u.UID }

var _ = (fusefs.NodeReaddirer)((*usersRoot)(nil))

// Readdir lists the users the caller may enter (root sees them all and the
// daemon's .mindmount). Never cached by the kernel: the listing depends on
// who asks.
func (r *usersRoot) Readdir(ctx context.Context) (fusefs.DirStream, syscall.Errno) {
	uid, ok := callerUID(ctx)
	if !ok {
		return nil, syscall.EACCES
	}
	var list []fuse.DirEntry
	if uid == 0 {
		list = append(list, fuse.DirEntry{Name: memgraph.StateDir, Mode: syscall.S_IFDIR, Ino: usersStateDirIno})
	}
	for _, u := range r.users.List() {
		if mayEnter(uid, u) {
			h := fnv.New64a()
			h.Write([]byte(u.ID))
			list = append(list, fuse.DirEntry{Name: u.ID, Mode: syscall.S_IFDIR, Ino: usersInoBase | (h.Sum64()>>8)<<4 | 7})
		}
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return fusefs.NewListDirStream(list), 0
}

var _ = (fusefs.NodeLookuper)((*usersRoot)(nil))

// Lookup answers MNT/<id>: ENOENT for an unknown user, EACCES for another
// uid's user, and otherwise loads the user (a first access is a load) and
// returns its subtree, or, when the repository cannot be served, a
// directory holding only .mindmount/status that says why.
func (r *usersRoot) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	uid, ok := callerUID(ctx)
	if !ok {
		return nil, syscall.EACCES
	}
	if name == memgraph.StateDir {
		if uid != 0 {
			return nil, syscall.ENOENT
		}
		r.fill(&out.Attr, 0o700|syscall.S_IFDIR, fuse.Owner{})
		return r.NewPersistentInode(ctx, &usersStateDir{r: r}, fusefs.StableAttr{Mode: syscall.S_IFDIR, Ino: usersStateDirIno}), 0
	}
	u, ok := r.users.Lookup(name)
	if !ok {
		return nil, syscall.ENOENT
	}
	if !mayEnter(uid, u) {
		return nil, syscall.EACCES
	}
	t, err := r.tree(ctx, u)
	if err != nil {
		r.log.Warn("user cannot be served", "user", u.ID, "err", err)
		return r.broken(ctx, u, err, out), 0
	}
	var st syscall.Stat_t
	if err := syscall.Stat(t.m.dir, &st); err != nil {
		return r.broken(ctx, u, err, out), 0
	}
	out.Attr.FromStat(&st)
	out.Attr.Mode = syscall.S_IFDIR | 0o700
	out.Attr.Owner = fuse.Owner{Uid: u.UID, Gid: u.GID}
	return t.in, 0
}

// tree returns user u's subtree, building it on first use. Building it
// loads the user once, so that a broken repository is found here.
func (r *usersRoot) tree(ctx context.Context, u UserInfo) (*userTree, error) {
	r.mu.Lock()
	if t := r.trees[u.ID]; t != nil && t.info.Dir == u.Dir {
		t.info = u
		r.mu.Unlock()
		return t, nil
	}
	r.mu.Unlock()
	// Load outside r.mu: loading tells the mount (Loaded), which takes it.
	p := &userProxy{users: r.users, id: u.ID, dir: u.Dir}
	if err := p.with(func(*UserRepo) {}); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(u.Dir)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.trees[u.ID]; t != nil && t.info.Dir == u.Dir {
		return t, nil // built meanwhile by a concurrent lookup
	}
	m, err := newMountState(dir, p.deps(), r.opt.Options, r.log.With("user", u.ID))
	if err != nil {
		return nil, err
	}
	r.next++
	m.inoSalt = r.next << 20
	m.opt.OnConsolidate = p.consolidate
	m.owner = fuse.Owner{Uid: u.UID, Gid: u.GID}
	m.callers.writer = func(pid uint32) {
		if sb := r.sandboxes.of(pid); sb != "" {
			p.with(func(rp *UserRepo) { rp.Tracker.NoteSandbox(sb) })
		}
	}
	in := r.NewPersistentInode(ctx, m.root, fusefs.StableAttr{Mode: syscall.S_IFDIR, Ino: usersInoBase | r.next<<4})
	m.attach()
	t := &userTree{info: u, m: m, proxy: p, in: in}
	r.trees[u.ID] = t
	return t, nil
}

// broken returns a directory that holds only .mindmount/status saying why
// user u cannot be served. The kernel keeps it a second: a fixed
// repository is served at the next look after that.
func (r *usersRoot) broken(ctx context.Context, u UserInfo, why error, out *fuse.EntryOut) *fusefs.Inode {
	text := fmt.Sprintf("mindmount: user %s cannot be served\n\n%v\n\nOther users are not affected. Fix the repository (%s); the daemon tries again at the next access.\n", u.ID, why, u.Dir)
	r.mu.Lock()
	r.next++
	n := r.next
	r.mu.Unlock()
	d := &brokenDir{r: r, u: u, status: []byte(text), n: n}
	r.fill(&out.Attr, 0o700|syscall.S_IFDIR, fuse.Owner{Uid: u.UID, Gid: u.GID})
	out.SetEntryTimeout(time.Second)
	out.SetAttrTimeout(time.Second)
	return r.NewInode(ctx, d, fusefs.StableAttr{Mode: syscall.S_IFDIR, Ino: usersInoBase | n<<4 | userInoBrokenDir})
}

// changed drops the kernel's entry of MNT/<id> after the registry changed;
// a removed user's subtree is detached from the root. The kernel is told
// from a goroutine of its own: a change is often noticed inside a request
// (a lookup re-reads the registry), and a notification sent from a
// handler can wait forever for the directory lock that request holds.
func (r *usersRoot) changed(id string) {
	r.guard.refresh(id)
	_, exists := r.users.Lookup(id)
	var t *userTree
	if !exists {
		r.mu.Lock()
		t = r.trees[id]
		delete(r.trees, id)
		r.mu.Unlock()
		if t != nil {
			t.m.closed.Store(true) // no more cache notifications for it
		}
	}
	go func() {
		if ch := r.GetChild(id); ch != nil && !exists {
			r.NotifyDelete(id, ch)
			r.RmChild(id)
			return
		}
		r.NotifyEntry(id)
	}()
}

// loaded attaches the subtree of user id (when the kernel knows it) to the
// tracker just loaded.
func (r *usersRoot) loaded(id string) {
	r.mu.Lock()
	t := r.trees[id]
	r.mu.Unlock()
	if t != nil {
		go t.proxy.with(func(*UserRepo) {}) // not on the loader's goroutine
	}
}

// shutdown stops every subtree's invalidator once the mount is gone.
func (r *usersRoot) shutdown() {
	r.mu.Lock()
	trees := r.trees
	r.trees = map[string]*userTree{}
	r.mu.Unlock()
	for _, t := range trees {
		t.m.closed.Store(true)
		t.m.inval.stop()
	}
}

// usersStateDir is MNT/.mindmount: the daemon's status, for root.
type usersStateDir struct {
	fusefs.Inode
	r *usersRoot
}

var _ = (fusefs.NodeLookuper)((*usersStateDir)(nil))

func (d *usersStateDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	if name != "status" {
		return nil, syscall.ENOENT
	}
	f := d.r.synthFile(fuse.Owner{}, 0, d.r.users.Status)
	f.attr(&out.Attr)
	out.SetAttrTimeout(time.Nanosecond)
	return d.NewPersistentInode(ctx, f, fusefs.StableAttr{Mode: syscall.S_IFREG, Ino: usersStatusIno}), 0
}

var _ = (fusefs.NodeReaddirer)((*usersStateDir)(nil))

func (d *usersStateDir) Readdir(ctx context.Context) (fusefs.DirStream, syscall.Errno) {
	return fusefs.NewListDirStream([]fuse.DirEntry{{Name: "status", Mode: syscall.S_IFREG, Ino: usersStatusIno}}), 0
}

var _ = (fusefs.NodeGetattrer)((*usersStateDir)(nil))

func (d *usersStateDir) Getattr(ctx context.Context, fh fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.r.fill(&out.Attr, 0o700|syscall.S_IFDIR, fuse.Owner{})
	return 0
}

// synthFile makes a read-only file of the daemon's at the multi-user root
// (MNT/.mindmount/status, the status of a broken user) whose bytes gen makes:
// owned by owner with mode (0400 when 0); nothing needs folding first.
func (r *usersRoot) synthFile(owner fuse.Owner, mode uint32, gen func() []byte) *synthFile {
	if mode == 0 {
		mode = 0o400
	}
	return &synthFile{
		gen: gen,
		fill: func(a *fuse.Attr, size uint64) {
			r.fill(a, mode|syscall.S_IFREG, owner)
			a.Size = size
			a.Blocks = (size + 511) / 512
		},
		noOpen: r.opt.noOpen(),
		log:    r.log,
	}
}

// brokenDir stands for a user whose repository cannot be served: it holds
// .mindmount/status and nothing else, and refuses every change.
type brokenDir struct {
	fusefs.Inode
	r      *usersRoot
	u      UserInfo
	status []byte
	n      uint64
}

var _ = (fusefs.NodeGetattrer)((*brokenDir)(nil))

func (d *brokenDir) Getattr(ctx context.Context, fh fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.r.fill(&out.Attr, 0o700|syscall.S_IFDIR, fuse.Owner{Uid: d.u.UID, Gid: d.u.GID})
	out.SetTimeout(time.Second)
	return 0
}

var _ = (fusefs.NodeReaddirer)((*brokenDir)(nil))

func (d *brokenDir) Readdir(ctx context.Context) (fusefs.DirStream, syscall.Errno) {
	return fusefs.NewListDirStream([]fuse.DirEntry{{Name: memgraph.StateDir, Mode: syscall.S_IFDIR, Ino: usersInoBase | d.n<<4 | userInoBrokenStat}}), 0
}

var _ = (fusefs.NodeLookuper)((*brokenDir)(nil))

func (d *brokenDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	if name != memgraph.StateDir {
		return nil, syscall.ENOENT
	}
	owner := fuse.Owner{Uid: d.u.UID, Gid: d.u.GID}
	d.r.fill(&out.Attr, 0o500|syscall.S_IFDIR, owner)
	out.SetEntryTimeout(time.Second)
	out.SetAttrTimeout(time.Second)
	return d.NewInode(ctx, &brokenState{d: d}, fusefs.StableAttr{Mode: syscall.S_IFDIR, Ino: usersInoBase | d.n<<4 | userInoBrokenStat}), 0
}

// brokenState is .mindmount of a broken user: only status.
type brokenState struct {
	fusefs.Inode
	d *brokenDir
}

var _ = (fusefs.NodeGetattrer)((*brokenState)(nil))

func (s *brokenState) Getattr(ctx context.Context, fh fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	s.d.r.fill(&out.Attr, 0o500|syscall.S_IFDIR, fuse.Owner{Uid: s.d.u.UID, Gid: s.d.u.GID})
	return 0
}

var _ = (fusefs.NodeReaddirer)((*brokenState)(nil))

func (s *brokenState) Readdir(ctx context.Context) (fusefs.DirStream, syscall.Errno) {
	return fusefs.NewListDirStream([]fuse.DirEntry{{Name: "status", Mode: syscall.S_IFREG, Ino: usersInoBase | s.d.n<<4 | userInoBrokenFile}}), 0
}

var _ = (fusefs.NodeLookuper)((*brokenState)(nil))

func (s *brokenState) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	if name != "status" {
		return nil, syscall.ENOENT
	}
	owner := fuse.Owner{Uid: s.d.u.UID, Gid: s.d.u.GID}
	data := s.d.status
	f := s.d.r.synthFile(owner, 0o444, func() []byte { return data })
	f.attr(&out.Attr)
	out.SetAttrTimeout(time.Nanosecond)
	return s.NewInode(ctx, f, fusefs.StableAttr{Mode: syscall.S_IFREG, Ino: usersInoBase | s.d.n<<4 | userInoBrokenFile}), 0
}
