package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
)

// TestInitPrivate is issue 14 defect 10: memories are private, so a new
// repository is readable by its owner only, and stays so for files
// written later; --shared keeps the usual modes.
func TestInitPrivate(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := d.Info()
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %v, want no group/other bits", p, fi.Mode().Perm())
		}
		return nil
	})
	if v := gitOut(t, dir, "config", "core.sharedRepository"); v != "0600" {
		t.Errorf("core.sharedRepository = %q", v)
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Private() {
		t.Fatal("repository not private after init")
	}
	if _, err := r.Apply([]gitrepo.Change{{Path: "user_memory/new/x.md", Data: []byte("x\n")}}, "m", gitrepo.Mindmount, time.Now()); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"user_memory/new", "user_memory/new/x.md"} {
		fi, _ := os.Stat(filepath.Join(dir, rel))
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s written later: mode %v", rel, fi.Mode().Perm())
		}
	}
	gitOut(t, dir, "fsck", "--strict", "--no-progress")

	shared := filepath.Join(t.TempDir(), "shared")
	runCmd(t, "init", shared, "--shared")
	if fi, _ := os.Stat(filepath.Join(shared, "user.md")); fi.Mode().Perm()&0o044 == 0 {
		t.Errorf("--shared: user.md mode %v", fi.Mode().Perm())
	}
}
