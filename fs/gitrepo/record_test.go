package gitrepo

import (
	"errors"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"os"
	"path/filepath"
	"testing"
)

// TestRecordMerge: a merge is one Commit with two parents, recorded by the
// same sequence as every commit: both parents in order, the files in the
// work tree and the index, git finds the result sound and clean.
func TestRecordMerge(t *testing.T) {
	r, dir := tempRepo(t)
	base := apply(t, r, "base", put("user_memory/a.md", "a\n"))
	side := sideCommit(t, r, base)
	if h, _ := r.Head(); h != base {
		t.Fatalf("a commit on another branch moved HEAD to %s", h)
	}
	if st := gitCmd(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("a commit on another branch touched the work tree:\n%s", st)
	}
	ours := apply(t, r, "ours", put("user_memory/b.md", "b\n"))
	m, err := r.Record(Commit{Changes: []Change{put("user_memory/side.md", "side\n")}, Message: "merge side", Author: who, When: when,
		Parents: []string{ours, side}, Worktree: true, Clean: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := gitCmd(t, dir, "log", "-1", "--format=%P", m); got != ours+" "+side {
		t.Fatalf("parents %q", got)
	}
	if got := gitCmd(t, dir, "show", m+":user_memory/side.md"); got != "side" {
		t.Fatalf("merged file %q", got)
	}
	checkClean(t, dir)

	// An empty merge (theirs brings nothing new) is still a commit.
	side2 := sideCommit2(t, r, m)
	if h, err := r.Record(Commit{Message: "merge empty", Author: who, When: when, Parents: []string{m, side2}}); err != nil || h == "" {
		t.Fatalf("empty merge: %q, %v", h, err)
	}
	checkClean(t, dir)
}

func sideCommit2(t *testing.T, r *Repo, base string) string {
	t.Helper()
	h, err := r.Record(Commit{Changes: []Change{put("user_memory/a.md", "a\n")}, Message: "noop", Author: who, When: when, Branch: "side2", Parents: []string{base}})
	if err != nil {
		t.Fatal(err)
	}
	if h != "" {
		return h
	}
	// Nothing changed: the branch starts at base, merged as it is.
	return base
}

// TestRecordRefusals: a stale first parent, an uncommitted edit under a
// Clean write and a bad branch name change nothing.
func TestRecordRefusals(t *testing.T) {
	r, dir := tempRepo(t)
	base := apply(t, r, "base", put("user_memory/a.md", "a\n"))
	next := apply(t, r, "next", put("user_memory/a.md", "a2\n"))

	_, err := r.Record(Commit{Changes: []Change{put("user_memory/c.md", "c\n")}, Message: "stale", Author: who, Parents: []string{base}, Worktree: true})
	if !errors.Is(err, ErrRefMoved) {
		t.Fatalf("stale parent: %v, want ErrRefMoved", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "user_memory/c.md")); !os.IsNotExist(err) {
		t.Fatalf("a refused commit wrote the work tree: %v", err)
	}

	writeFile(t, dir, "user_memory/a.md", "local edit\n")
	_, err = r.Record(Commit{Changes: []Change{put("user_memory/a.md", "theirs\n")}, Message: "dirty", Author: who, Parents: []string{next, base}, Worktree: true, Clean: true})
	if !errors.Is(err, ErrDirty) {
		t.Fatalf("uncommitted edit: %v, want ErrDirty", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "user_memory/a.md")); string(b) != "local edit\n" {
		t.Fatalf("the local edit was overwritten: %q", b)
	}

	// A directory where the tree has a file is not clean either (EISDIR,
	// matched by its errno, not its text); a directory where the tree has
	// nothing is.
	os.Remove(filepath.Join(dir, "user_memory/a.md"))
	os.MkdirAll(filepath.Join(dir, "user_memory/a.md", "x"), 0o755)
	_, err = r.Record(Commit{Changes: []Change{put("user_memory/a.md", "theirs\n")}, Message: "dir", Author: who, Parents: []string{next, base}, Worktree: true, Clean: true})
	if !errors.Is(err, ErrDirty) {
		t.Fatalf("a directory in place of a file: %v, want ErrDirty", err)
	}
	os.RemoveAll(filepath.Join(dir, "user_memory/a.md"))
	if err := os.WriteFile(filepath.Join(dir, "user_memory/a.md"), []byte("a2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(dir, "user_memory/new.md"), 0o755)
	if err := r.checkClean(mustTree(t, r, next), "user_memory/new.md"); err != nil {
		t.Fatalf("a directory where the tree has nothing: %v", err)
	}
	os.Remove(filepath.Join(dir, "user_memory/new.md"))

	for _, name := range []string{"../x", "a..b", "-x", "a b", "x.lock", ".hidden", "a/.b", "HEAD@{1}", "a~1", "a:b"} {
		if _, err := r.Record(Commit{Changes: []Change{put("x.md", "x")}, Branch: name, Parents: []string{next}}); !errors.Is(err, ErrBadPath) {
			t.Errorf("branch %q: %v, want ErrBadPath", name, err)
		}
	}
	if _, err := r.Record(Commit{Changes: []Change{put("x.md", "x")}, Branch: "dream", Worktree: true}); err == nil {
		t.Error("a commit on another branch wrote the work tree")
	}
	if h, _ := r.Head(); h != next {
		t.Fatalf("HEAD moved: %s", h)
	}
}

func mustTree(t *testing.T, r *Repo, commit string) plumbing.Hash {
	t.Helper()
	c, err := r.treeOf(commit, false)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRecordDeleteBranch: a Commit with DeleteBranch removes the branch as
// "git branch -D" would — loose or packed by "git pack-refs", with its
// reflog — only while it points where the caller saw it, and never HEAD's
// own branch; git then knows no such branch and the repository is sound.
func TestRecordDeleteBranch(t *testing.T) {
	for _, packed := range []bool{false, true} {
		r, dir := tempRepo(t)
		base := apply(t, r, "base", put("user_memory/a.md", "a\n"))
		side := sideCommit(t, r, base)
		gitCmd(t, dir, "branch", "other", base) // a packed neighbour must survive
		if packed {
			gitCmd(t, dir, "pack-refs", "--all")
		}
		del := func(branch, at string) error {
			_, err := r.Record(Commit{Branch: branch, DeleteBranch: true, Parents: []string{at}, Author: who, When: when})
			return err
		}
		if err := del("side", base); !errors.Is(err, ErrRefMoved) {
			t.Fatalf("packed=%v: deleting a branch that moved: %v, want ErrRefMoved", packed, err)
		}
		head := strings.TrimPrefix(gitCmd(t, dir, "symbolic-ref", "HEAD"), "refs/heads/")
		if err := del(head, base); !errors.Is(err, ErrCurrentBranch) {
			t.Fatalf("packed=%v: deleting HEAD's branch %s: %v, want ErrCurrentBranch", packed, head, err)
		}
		if err := del("side", side); err != nil {
			t.Fatalf("packed=%v: %v", packed, err)
		}
		if got := gitCmd(t, dir, "branch", "-a", "--format=%(refname:short)"); got != "other\n"+head && got != head+"\nother" {
			t.Fatalf("packed=%v: branches after the delete:\n%s", packed, got)
		}
		if _, err := os.Stat(filepath.Join(dir, ".git", "logs", "refs", "heads", "side")); !os.IsNotExist(err) {
			t.Fatalf("packed=%v: the branch's reflog survived: %v", packed, err)
		}
		if err := del("side", side); !errors.Is(err, ErrRefMoved) {
			t.Fatalf("packed=%v: deleting a branch twice: %v, want ErrRefMoved", packed, err)
		}
		if h, _ := r.Head(); h != base {
			t.Fatalf("packed=%v: HEAD moved to %s", packed, h)
		}
		gitCmd(t, dir, "fsck", "--strict", "--no-progress")
	}
}
