package host

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestAddNewUser: the one sequence that adds a user (mindmount users add,
// serve --auto-users) makes a private repository, registers the user and
// hands it the repository, the daemon lock the first commit took
// included; an ID registered already, a full uid range, a taken uid and
// a folder already at a new user's place (OnlyNew) are refused before
// anything is made; a mindmount repository at the place is adopted.
func TestAddNewUser(t *testing.T) {
	root := t.TempDir()
	uid := func(n uint32) uint32 {
		if os.Geteuid() != 0 {
			return uint32(os.Getuid())
		}
		return 3100 + n
	}
	e, res, err := AddNewUser(root, NewUser{Entry: Entry{ID: "alice", UID: uid(0), GID: uid(0), Name: "Alice"}})
	if err != nil || !res.Fresh || res.Commit == "" || e.UUID == "" {
		t.Fatalf("alice: %+v, %+v, %v", e, res, err)
	}
	dir := UserDir(root, "alice")
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("alice's repository: %v, %v; want a private folder", fi, err)
	}
	for _, p := range []string{dir, filepath.Join(dir, ".git", "HEAD"), filepath.Join(dir, ".git", "mindmount-daemon.lock")} {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil || st.Uid != uid(0) {
			t.Fatalf("%s: owner %d, %v; want %d", p, st.Uid, err, uid(0))
		}
	}
	users, _ := ReadRegistry(root)
	if len(users) != 1 || users[0].ID != "alice" || users[0].Name != "Alice" {
		t.Fatalf("registry: %+v", users)
	}
	if _, _, err := AddNewUser(root, NewUser{Entry: Entry{ID: "alice", UID: uid(1), GID: uid(1)}}); !errors.Is(err, ErrUserExists) {
		t.Fatalf("alice again: %v, want ErrUserExists", err)
	}
	full := errors.New("the range is full")
	if _, _, err := AddNewUser(root, NewUser{Entry: Entry{ID: "bob"}, Pick: func([]Entry) (uint32, uint32, error) { return 0, 0, full }}); !errors.Is(err, full) {
		t.Fatalf("bob, no uid free: %v", err)
	}
	if os.Geteuid() == 0 {
		if _, _, err := AddNewUser(root, NewUser{Entry: Entry{ID: "bob", UID: uid(0), GID: uid(1)}}); !errors.Is(err, ErrIDTaken) {
			t.Fatalf("bob with alice's uid: %v, want ErrIDTaken", err)
		}
	}
	if _, err := os.Lstat(UserDir(root, "bob")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused user's folder was made: %v", err)
	}
	if err := os.Mkdir(UserDir(root, "carol"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := AddNewUser(root, NewUser{Entry: Entry{ID: "carol", UID: uid(2), GID: uid(2)}, OnlyNew: true}); !errors.Is(err, ErrUnregisteredDir) {
		t.Fatalf("carol's folder existed: %v, want ErrUnregisteredDir", err)
	}
	if _, err := InitRepo(UserDir(root, "dave"), InitOptions{User: "Dave"}); err != nil {
		t.Fatal(err)
	}
	e, res, err = AddNewUser(root, NewUser{Entry: Entry{ID: "dave", UID: uid(3), GID: uid(3)}})
	if err != nil || res.Fresh || res.Commit != "" || e.ID != "dave" {
		t.Fatalf("dave's repository adopted: %+v, %+v, %v", e, res, err)
	}
	users, _ = ReadRegistry(root)
	if len(users) != 2 || users[1].ID != "dave" {
		t.Fatalf("registry: %+v (want alice and dave only)", users)
	}
}
