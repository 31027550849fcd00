package host

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/fs/gitrepo"
)

// TestInitRepo: a new repository is made private, holds the template and
// one commit by mindmount; a second call adds nothing and commits nothing;
// a template file deleted from the work tree comes back (as HEAD has it,
// so there is nothing to commit).
func TestInitRepo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	res, err := InitRepo(dir, InitOptions{User: "Ada", Private: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Fresh || res.Commit == "" || !slices.Contains(res.Created, "user.md") || !slices.Contains(res.Created, "character.md") {
		t.Fatalf("%+v", res)
	}
	if !IsMindmountRepo(dir) {
		t.Fatal("not a mindmount repository")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "user.md")); !strings.Contains(string(b), "Ada") {
		t.Errorf("user.md:\n%s", b)
	}
	for _, p := range []string{dir, filepath.Join(dir, "user.md"), filepath.Join(dir, ".git")} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: %v %v, want private", p, fi.Mode(), err)
		}
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if head, err := r.Head(); err != nil || head != res.Commit {
		t.Errorf("HEAD %s (%v), want the init commit %s", head, err, res.Commit)
	}
	again, err := InitRepo(dir, InitOptions{Private: true})
	if err != nil || again.Fresh || again.Commit != "" || len(again.Created) != 0 || again.Upgraded != nil {
		t.Errorf("second init: %+v, %v", again, err)
	}
	os.Remove(filepath.Join(dir, "README.md"))
	back, err := InitRepo(dir, InitOptions{})
	if _, statErr := os.Stat(filepath.Join(dir, "README.md")); err != nil || statErr != nil || !slices.Equal(back.Created, []string{"README.md"}) || back.Commit != "" {
		t.Errorf("after deleting README.md: %+v, %v", back, err)
	}
}

// TestCheckInitTarget: a missing or empty folder and the caller's own git
// repository are fine; a folder of other files and a file are refused.
func TestCheckInitTarget(t *testing.T) {
	base := t.TempDir()
	full := filepath.Join(base, "full")
	os.MkdirAll(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	gitDir := filepath.Join(base, "git")
	os.MkdirAll(filepath.Join(gitDir, ".git"), 0o755)
	os.WriteFile(filepath.Join(gitDir, "x"), nil, 0o644)
	empty := filepath.Join(base, "empty")
	os.MkdirAll(empty, 0o755)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o644)
	for dir, ok := range map[string]bool{
		filepath.Join(base, "missing"): true,
		empty:                          true,
		gitDir:                         true,
		full:                           false,
		file:                           false,
	} {
		if err := CheckInitTarget(dir); (err == nil) != ok {
			t.Errorf("%s: %v, want ok=%v", dir, err, ok)
		}
	}
}
