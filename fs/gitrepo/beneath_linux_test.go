package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestApplyRefusesSymlinkedFolder is issue 14 defect 6: a memory folder
// replaced by a link to a directory outside the repository must make the
// consolidator's write fail, never create files outside or commit them.
func TestApplyRefusesSymlinkedFolder(t *testing.T) {
	r, dir := tempRepo(t)
	apply(t, r, "seed", put("user_memory/a.md", "a\n"))
	head := gitCmd(t, dir, "rev-parse", "HEAD")
	outside := t.TempDir()
	os.RemoveAll(filepath.Join(dir, "user_memory"))
	if err := os.Symlink(outside, filepath.Join(dir, "user_memory")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"user_memory/b.md", "user_memory/deep/c.md"} {
		_, err := r.Apply([]Change{put(rel, "evil\n")}, "consolidate", who, when)
		if !errors.Is(err, ErrUnsafePath) {
			t.Fatalf("Apply %s through a symlinked folder: %v, want ErrUnsafePath", rel, err)
		}
	}
	if _, err := r.Apply([]Change{del("user_memory/a.md")}, "consolidate", who, when); !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("delete through a symlinked folder: %v", err)
	}
	if err := r.WriteDerived("user_memory/x.md", []byte("x")); !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("WriteDerived: %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("files written outside the repository: %v", ents)
	}
	if got := gitCmd(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatal("HEAD moved")
	}
	// A link that stays inside the repository is refused too: through
	// character_memory -> .git/hooks a write would plant a git hook.
	hooks := filepath.Join(dir, ".git", "hooks")
	os.MkdirAll(hooks, 0o755)
	os.Symlink(".git/hooks", filepath.Join(dir, "character_memory"))
	if _, err := r.Apply([]Change{put("character_memory/post-commit", "#!/bin/sh\n")}, "c", who, when); !errors.Is(err, ErrUnsafePath) {
		t.Fatalf("Apply through a link into .git: %v", err)
	}
	if _, err := os.Stat(filepath.Join(hooks, "post-commit")); err == nil {
		t.Fatal("hook planted through a symlinked folder")
	}
}

// TestApplyReplacesSymlinkedFile: a link at the file itself is replaced by
// the written file; its target is never written.
func TestApplyReplacesSymlinkedFile(t *testing.T) {
	r, dir := tempRepo(t)
	target := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(target, []byte("keep\n"), 0o600)
	os.MkdirAll(filepath.Join(dir, "user_memory"), 0o755)
	os.Symlink(target, filepath.Join(dir, "user_memory", "a.md"))
	apply(t, r, "write", put("user_memory/a.md", "new\n"))
	if b, _ := os.ReadFile(target); string(b) != "keep\n" {
		t.Fatalf("link target written: %q", b)
	}
	fi, err := os.Lstat(filepath.Join(dir, "user_memory", "a.md"))
	if err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("a.md is not a regular file: %v %v", fi, err)
	}
	checkClean(t, dir)
}
