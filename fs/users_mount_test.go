package fs

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/gitrepo"
	"github.com/mindmount/mindmount/memgraph/tracker"
)

// Two users of a multi-user mount, with uids no process of the test has:
// the guard is driven with each request's caller set by hand, as the
// kernel would set it for a process of that uid.
const (
	aliceUID = 42001
	bobUID   = 42002
)

// fakeUsers is the daemon's side of a multi-user mount (Users) for tests:
// a fixed registry whose repositories stay loaded.
type fakeUsers struct {
	mu    sync.Mutex
	infos map[string]UserInfo
	repos map[string]*UserRepo
}

func (f *fakeUsers) List() []UserInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []UserInfo
	for _, u := range f.infos {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (f *fakeUsers) Lookup(id string) (UserInfo, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.infos[id]
	return u, ok
}

func (f *fakeUsers) Acquire(ctx context.Context, id string) (*UserRepo, func(), error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.repos[id]
	if !ok {
		return nil, nil, errors.New("no such user")
	}
	return r, func() {}, nil
}

func (f *fakeUsers) Status() []byte { return []byte("test daemon\n") }

// remove drops user id from the registry (its repository stays loaded).
func (f *fakeUsers) remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.infos, id)
}

// usersMount is a mounted multi-user tree of alice and bob.
type usersMount struct {
	t     *testing.T
	mnt   string
	dirs  map[string]string // user -> backing repository
	users *fakeUsers
	srv   *UsersServer
	g     *guard
}

// mountUsers mounts alice's and bob's repositories with the daemon's guard
// alone deciding (no default_permissions): what holds here holds because
// of the guard.
func mountUsers(t *testing.T) *usersMount {
	t.Helper()
	requireFUSE(t)
	if os.Geteuid() != 0 {
		t.Skip("a multi-user mount needs allow_other: run as root")
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	root := t.TempDir()
	um := &usersMount{t: t, mnt: t.TempDir(), dirs: map[string]string{},
		users: &fakeUsers{infos: map[string]UserInfo{}, repos: map[string]*UserRepo{}}}
	for id, uid := range map[string]uint32{"alice": aliceUID, "bob": bobUID} {
		dir := newRepo(t, map[string]string{
			"user_memory/" + id + "-secret.md": memoryFile(id+" secret", id+"'s secret", "Only "+id+" knows."),
			"notes/" + id + "-plan.md":         "# Plan of " + id + "\n",
		})
		um.dirs[id] = dir
		g, err := memgraph.Scan(dir)
		if err != nil {
			t.Fatal(err)
		}
		r, err := gitrepo.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		tr := tracker.New(g, r, tracker.Config{Debounce: 20 * time.Millisecond, Logger: log})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- tr.Run(ctx) }()
		<-tr.Ready()
		t.Cleanup(func() { cancel(); <-done })
		um.users.infos[id] = UserInfo{ID: id, UID: uid, GID: uid, Dir: dir}
		um.users.repos[id] = &UserRepo{Graph: g, Tracker: tr, Repo: r}
	}
	srv, err := MountUsers(um.mnt, um.users, UsersOptions{Options: Options{Logger: log}, Root: root, NoKernelChecks: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
		srv.Server().Wait()
	})
	um.srv, um.g = srv, srv.root.guard
	return um
}

// hdr is a request header from uid on node id.
func hdr(id uint64, uid uint32) fuse.InHeader {
	return fuse.InHeader{NodeId: id, Caller: fuse.Caller{Owner: fuse.Owner{Uid: uid, Gid: uid}, Pid: uint32(os.Getpid())}}
}

// lookup resolves a slash path from the mount's root through the guard as
// uid, failing the test unless every step succeeds.
func (um *usersMount) lookup(path string, uid uint32) uint64 {
	um.t.Helper()
	id, st := um.tryLookup(path, uid)
	if !st.Ok() {
		um.t.Fatalf("lookup %s as %d: %v", path, uid, st)
	}
	return id
}

func (um *usersMount) tryLookup(path string, uid uint32) (uint64, fuse.Status) {
	id := uint64(fuse.FUSE_ROOT_ID)
	for _, name := range strings.Split(path, "/") {
		var out fuse.EntryOut
		h := hdr(id, uid)
		if st := um.g.Lookup(make(chan struct{}), &h, name, &out); !st.Ok() {
			return 0, st
		}
		if out.NodeId == 0 {
			return 0, fuse.ENOENT
		}
		id = out.NodeId
	}
	return id, fuse.OK
}

func (um *usersMount) rename(uid uint32, fromDir uint64, oldName string, toDir uint64, newName string) fuse.Status {
	in := fuse.RenameIn{InHeader: hdr(fromDir, uid), Newdir: toDir}
	return um.g.Rename(make(chan struct{}), &in, oldName, newName)
}

// exists reports whether rel is in user's backing repository.
func (um *usersMount) exists(user, rel string) bool {
	_, err := os.Lstat(filepath.Join(um.dirs[user], filepath.FromSlash(rel)))
	return err == nil
}

// TestUsersRenameStaysInOneTree: a rename from one user's tree into
// another's is EXDEV (as between two file systems) for the owner of the
// source and for root alike; one whose source is another user's is
// EACCES; files and directories alike; and nothing moves. Within one
// user's tree a rename goes through, so the refusals are not a rename
// that never works. (Behind the guard, go-fuse's loopback refuses a
// rename between two roots as well, and each user's tree has its own:
// TestGuardAcrossUsers shows the guard's refusal alone.)
func TestUsersRenameStaysInOneTree(t *testing.T) {
	um := mountUsers(t)
	aliceMem := um.lookup("alice/user_memory", aliceUID)
	aliceTop := um.lookup("alice", aliceUID)
	bobMem := um.lookup("bob/user_memory", 0) // the guard learns bob's nodes from root's lookups
	bobTop := um.lookup("bob", 0)
	aliceNotes := um.lookup("alice/notes", aliceUID)

	cases := []struct {
		name          string
		uid           uint32
		from          uint64
		old           string
		to            uint64
		new           string
		want          syscall.Errno
		stays         [2]string // user, rel that must still be there
		mustNotAppear [2]string // user, rel that must not appear
	}{
		{"alice moves her file into bob's tree", aliceUID, aliceMem, "alice-secret.md", bobMem, "alice-secret.md", syscall.EXDEV,
			[2]string{"alice", "user_memory/alice-secret.md"}, [2]string{"bob", "user_memory/alice-secret.md"}},
		{"alice moves her file to bob's top", aliceUID, aliceMem, "alice-secret.md", bobTop, "planted.md", syscall.EXDEV,
			[2]string{"alice", "user_memory/alice-secret.md"}, [2]string{"bob", "planted.md"}},
		{"alice moves her directory into bob's tree", aliceUID, aliceTop, "notes", bobTop, "notes-from-alice", syscall.EXDEV,
			[2]string{"alice", "notes/alice-plan.md"}, [2]string{"bob", "notes-from-alice"}},
		{"alice moves bob's file into her tree", aliceUID, bobMem, "bob-secret.md", aliceMem, "stolen.md", syscall.EACCES,
			[2]string{"bob", "user_memory/bob-secret.md"}, [2]string{"alice", "user_memory/stolen.md"}},
		{"alice moves bob's directory into her tree", aliceUID, bobTop, "user_memory", aliceNotes, "stolen", syscall.EACCES,
			[2]string{"bob", "user_memory/bob-secret.md"}, [2]string{"alice", "notes/stolen"}},
		{"bob moves alice's file into his tree", bobUID, aliceMem, "alice-secret.md", bobMem, "stolen.md", syscall.EACCES,
			[2]string{"alice", "user_memory/alice-secret.md"}, [2]string{"bob", "user_memory/stolen.md"}},
		{"root moves alice's file into bob's tree", 0, aliceMem, "alice-secret.md", bobMem, "alice-secret.md", syscall.EXDEV,
			[2]string{"alice", "user_memory/alice-secret.md"}, [2]string{"bob", "user_memory/alice-secret.md"}},
		{"root moves bob's directory into alice's tree", 0, bobTop, "notes", aliceTop, "bob-notes", syscall.EXDEV,
			[2]string{"bob", "notes/bob-plan.md"}, [2]string{"alice", "bob-notes"}},
		{"alice renames a user's whole tree", aliceUID, fuse.FUSE_ROOT_ID, "alice", bobTop, "alice", syscall.EXDEV,
			[2]string{"alice", "user.md"}, [2]string{"bob", "alice"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if st := um.rename(tc.uid, tc.from, tc.old, tc.to, tc.new); st != fuse.Status(tc.want) {
				t.Errorf("rename = %v, want %v", syscall.Errno(st), tc.want)
			}
			if !um.exists(tc.stays[0], tc.stays[1]) {
				t.Errorf("%s's %s moved", tc.stays[0], tc.stays[1])
			}
			if um.exists(tc.mustNotAppear[0], tc.mustNotAppear[1]) {
				t.Errorf("%s appeared in %s's tree", tc.mustNotAppear[1], tc.mustNotAppear[0])
			}
		})
	}

	// Through the kernel, as root (the test's own uid): the same EXDEV,
	// so mv falls back to copy and delete, which the users' modes govern.
	for _, p := range [][2]string{
		{"alice/user_memory/alice-secret.md", "bob/user_memory/alice-secret.md"},
		{"bob/notes", "alice/notes/bob-notes"},
	} {
		err := os.Rename(filepath.Join(um.mnt, p[0]), filepath.Join(um.mnt, p[1]))
		if !errors.Is(err, syscall.EXDEV) {
			t.Errorf("rename %s -> %s through the mount: %v, want EXDEV", p[0], p[1], err)
		}
	}
	if !um.exists("alice", "user_memory/alice-secret.md") || um.exists("bob", "user_memory/alice-secret.md") ||
		!um.exists("bob", "notes/bob-plan.md") || um.exists("alice", "notes/bob-notes") {
		t.Error("a rename through the kernel moved something across users")
	}

	// Within alice's tree, alice's rename goes through.
	if st := um.rename(aliceUID, aliceMem, "alice-secret.md", aliceMem, "alice-renamed.md"); !st.Ok() {
		t.Fatalf("rename within alice's tree: %v", st)
	}
	if um.exists("alice", "user_memory/alice-secret.md") || !um.exists("alice", "user_memory/alice-renamed.md") {
		t.Fatal("rename within alice's tree did not move the file")
	}
}
