package host

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// GiveTo runs as root on a tree the user controls: what the user planted
// there before serve started — a hard link and a symbolic link to a
// root-owned file outside — never hands that file to the user. Root's
// own leftovers in the tree become the user's.
func TestGiveToNeverReachesOutside(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: GiveTo changes owners")
	}
	base := t.TempDir()
	outside := filepath.Join(base, "shadow")
	linked := filepath.Join(base, "passwd")
	for _, f := range []string{outside, linked} {
		if err := os.WriteFile(f, []byte("root's\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	repo := filepath.Join(base, "repo")
	os.MkdirAll(filepath.Join(repo, ".git/objects"), 0o755)
	leftover := filepath.Join(repo, ".git/index")
	os.WriteFile(leftover, []byte("index"), 0o644)
	if err := os.Link(outside, filepath.Join(repo, "hard.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(linked, filepath.Join(repo, "soft.md")); err != nil {
		t.Fatal(err)
	}
	const uid, gid = 2101, 2101
	if err := GiveTo(repo, uid, gid); err != nil {
		t.Fatal(err)
	}
	owner := func(p string) uint32 {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		return st.Uid
	}
	for _, p := range []string{outside, linked} {
		if u := owner(p); u != 0 {
			t.Errorf("%s, root's, now belongs to %d", p, u)
		}
	}
	for _, p := range []string{repo, leftover, filepath.Join(repo, ".git/objects"), filepath.Join(repo, "soft.md")} {
		if u := owner(p); u != uid {
			t.Errorf("%s belongs to %d, want the user's %d", p, u, uid)
		}
	}
}
