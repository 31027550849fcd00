package host

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/template"
)

// TestRootOf: a worker finds its ROOT from its repository's path, as
// UserDir made it.
func TestRootOf(t *testing.T) {
	for _, root := range []string{"/srv/mindmount", "/tmp/r", "relative/root"} {
		if got := RootOf(UserDir(root, "alice")); got != root {
			t.Errorf("RootOf(UserDir(%q, alice)) = %q", root, got)
		}
	}
}

// TestCheckIDs: the registry refuses root's ids and ids another user has.
func TestCheckIDs(t *testing.T) {
	users := []Entry{{ID: "alice", UID: 1001, GID: 1001}, {ID: "bob", UID: 1002, GID: 1002}}
	for _, c := range []struct {
		e    Entry
		want error
	}{
		{Entry{ID: "carol", UID: 1003, GID: 1003}, nil},
		{Entry{ID: "rooty", UID: 0, GID: 1003}, ErrRootIDs},
		{Entry{ID: "nouid"}, ErrRootIDs},
		{Entry{ID: "rootgroup", UID: 1003, GID: 0}, ErrRootIDs},
		{Entry{ID: "dupe", UID: 1001, GID: 1003}, ErrIDTaken},
		{Entry{ID: "dupegroup", UID: 1003, GID: 1002}, ErrIDTaken},
	} {
		if err := checkIDs(users, c.e); !errors.Is(err, c.want) {
			t.Errorf("%s %d:%d: %v, want %v", c.e.ID, c.e.UID, c.e.GID, err, c.want)
		}
	}
}

// TestUIDInUse: a uid picked for a new user is nobody's: not a registered
// user's, not a system account's (passwd), not the owner of a file at the
// top of ROOT (a removed user's credentials folder).
func TestUIDInUse(t *testing.T) {
	root := t.TempDir()
	old := filepath.Join(root, "credentials", "olduser")
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	canChown := os.Chown(old, 20001, 20001) == nil
	inUse := UIDInUse(root, []Entry{{ID: "alice", UID: 20000, GID: 20000}})
	for _, c := range []struct {
		uid  uint32
		want bool
		why  string
	}{
		{0, true, "root"},
		{20000, true, "a registered user"},
		{65534, true, "nobody, in passwd"},
		{20002, false, "free"},
	} {
		if got := inUse(c.uid); got != c.want {
			t.Errorf("uid %d (%s): in use %v, want %v", c.uid, c.why, got, c.want)
		}
	}
	if canChown && !inUse(20001) {
		t.Error("uid 20001 owns ROOT/credentials/olduser, yet is free")
	}
}

// TestRemoveUserRemovesCredentials: removing a user deletes its
// credentials folder in the same step (a symbolic link inside it is
// removed, never followed).
func TestRemoveUserRemovesCredentials(t *testing.T) {
	root := t.TempDir()
	keep := filepath.Join(t.TempDir(), "keep")
	os.WriteFile(keep, []byte("not the user's"), 0o600)
	newUser(t, root, "bob")
	creds := filepath.Join(root, "credentials", "bob")
	os.MkdirAll(creds, 0o700)
	os.WriteFile(filepath.Join(creds, "git"), []byte("https://github.com/ ghp_old\n"), 0o600)
	os.Symlink(keep, filepath.Join(creds, "link"))
	if err := RemoveUser(root, "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(creds); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ROOT/credentials/bob is still there after users remove: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the link's target went too: %v", err)
	}
}

// TestServedUserThroughALink: a command given a symbolic link to
// ROOT/users/<id>, or a relative path to it, finds the same ROOT and user
// as one given the path itself — ServedUser, ServedBy and CheckNotServed
// share one derivation — and a path of another shape is nobody's.
func TestServedUserThroughALink(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	if err := os.MkdirAll(UserDir(root, "alice"), 0o755); err != nil {
		t.Fatal(err)
	}
	reg := `{"users":[{"id":"alice","uid":1001,"gid":1001}]}`
	if err := os.WriteFile(filepath.Join(root, RegistryFile), []byte(reg), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "alice-link")
	if err := os.Symlink(UserDir(root, "alice"), link); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(root, UsersDir))
	for _, c := range []struct {
		dir    string
		wantOK bool
	}{
		{UserDir(root, "alice"), true},
		{link, true},
		{"alice", true},
		{filepath.Join(root, UsersDir, "bob"), false}, // not registered
		{root, false},
		{base, false},
	} {
		gotRoot, id, ok := ServedUser(c.dir)
		if ok != c.wantOK {
			t.Errorf("ServedUser(%q) ok = %v, want %v", c.dir, ok, c.wantOK)
			continue
		}
		if ok {
			real, _ := filepath.EvalSymlinks(root)
			if gotRoot != real || id != "alice" {
				t.Errorf("ServedUser(%q) = %q, %q; want %q, alice", c.dir, gotRoot, id, real)
			}
		}
	}
}

// TestAddUserHandsOverSafely: adding a user gives the repository to the
// user's ids through the one hand-over: a hard link in it to a file root
// owns elsewhere (/etc/shadow, here a stand-in) stays root's, a symbolic
// link is not followed, and another user's file stays theirs.
func TestAddUserHandsOverSafely(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("hands files to another uid: needs root")
	}
	root := t.TempDir()
	dir := UserDir(root, "alice")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := gitrepo.Init(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := template.Write(dir, "alice", false); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	shadow := filepath.Join(outside, "shadow")
	target := filepath.Join(outside, "target")
	for _, f := range []string{shadow, target} {
		if err := os.WriteFile(f, []byte("root's\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(shadow, filepath.Join(dir, "hardlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "symlink")); err != nil {
		t.Fatal(err)
	}
	bobs := filepath.Join(dir, "bobs")
	if err := os.WriteFile(bobs, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(bobs, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if err := AddUser(root, Entry{ID: "alice", UID: 4100, GID: 4100}); err != nil {
		t.Fatal(err)
	}
	owner := func(p string) uint32 {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		return st.Uid
	}
	for _, c := range []struct {
		path string
		want uint32
	}{
		{dir, 4100},
		{filepath.Join(dir, memgraph.UserFile), 4100},
		{filepath.Join(dir, ".git", "HEAD"), 4100},
		{filepath.Join(dir, "symlink"), 4100}, // the link itself
		{target, 0},                           // not what it points at
		{shadow, 0},                           // a second name of root's file
		{bobs, 4242},
	} {
		if got := owner(c.path); got != c.want {
			t.Errorf("%s owned by %d after AddUser, want %d", c.path, got, c.want)
		}
	}
}
