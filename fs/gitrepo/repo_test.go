package gitrepo

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var who = Author{Name: "tester", Email: "tester@example.com"}

// when is a fixed commit time so hashes are reproducible.
var when = time.Date(2026, 9, 1, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))

func requireGit(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
}

// gitCmd runs the real git CLI in dir and returns its trimmed output.
func gitCmd(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=cli", "GIT_AUTHOR_EMAIL=cli@x", "GIT_COMMITTER_NAME=cli", "GIT_COMMITTER_EMAIL=cli@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// checkClean asserts what every commit must leave behind: a sound object
// database and a work tree git sees as clean.
func checkClean(t *testing.T, dir string) {
	t.Helper()
	gitCmd(t, dir, "fsck", "--strict", "--no-progress")
	if st := gitCmd(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status not clean:\n%s", st)
	}
}

func tempRepo(t *testing.T) (*Repo, string) {
	t.Helper()
	requireGit(t)
	dir := t.TempDir()
	r, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r, dir
}

func apply(t *testing.T, r *Repo, msg string, cs ...Change) string {
	t.Helper()
	h, err := r.Apply(cs, msg, who, when)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func put(p, data string) Change { return Change{Path: p, Data: []byte(data)} }
func del(p string) Change       { return Change{Path: p, Delete: true} }

func TestOpenNotRepo(t *testing.T) {
	_, err := Open(t.TempDir())
	if !errors.Is(err, ErrNotRepo) {
		t.Fatalf("Open(empty dir) = %v, want ErrNotRepo", err)
	}
}

func TestCommitScenarios(t *testing.T) {
	r, dir := tempRepo(t)
	if h, err := r.Head(); err != nil || h != "" {
		t.Fatalf("Head on unborn = %q, %v", h, err)
	}

	// First commit on an unborn branch, with a 3-level nested path.
	h1 := apply(t, r, "first\n\nbody", put("a.md", "A\n"), put("x/y/z/deep.md", "deep\n"), put("x/keep.md", "k\n"))
	checkClean(t, dir)
	if got := gitCmd(t, dir, "rev-parse", "HEAD"); got != h1 {
		t.Fatalf("HEAD = %s, Commit returned %s", got, h1)
	}
	if got := gitCmd(t, dir, "symbolic-ref", "HEAD"); got != "refs/heads/main" {
		t.Fatalf("HEAD -> %s", got)
	}
	if got := gitCmd(t, dir, "log", "-1", "--format=%an <%ae> %at %s"); got != "tester <tester@example.com> "+
		"1788256800 first" {
		t.Fatalf("log = %q", got)
	}

	// Deleting the last file of a directory removes the directory's tree.
	apply(t, r, "second", del("x/y/z/deep.md"), put("a.md", "A2\n"))
	checkClean(t, dir)
	if got := gitCmd(t, dir, "ls-tree", "-r", "--name-only", "HEAD"); got != "a.md\nx/keep.md" {
		t.Fatalf("tree after delete:\n%s", got)
	}
	if got := gitCmd(t, dir, "log", "-1", "--name-status", "--format="); got != "M\ta.md\nD\tx/y/z/deep.md" {
		t.Fatalf("name-status:\n%s", got)
	}

	// Exec bit.
	apply(t, r, "exec", Change{Path: "bin/run.sh", Data: []byte("#!/bin/sh\n"), Exec: true})
	checkClean(t, dir)
	if got := gitCmd(t, dir, "ls-tree", "HEAD", "bin/run.sh"); !strings.HasPrefix(got, "100755 blob") {
		t.Fatalf("ls-tree = %q", got)
	}

	// A file added then removed in the same batch: nothing to commit.
	head := gitCmd(t, dir, "rev-parse", "HEAD")
	if h := apply(t, r, "noop", put("tmp.md", "t"), del("tmp.md")); h != "" {
		t.Fatalf("add+remove committed %s", h)
	}
	// Content equal to HEAD: no commit.
	if h := apply(t, r, "same", put("a.md", "A2\n")); h != "" {
		t.Fatalf("unchanged content committed %s", h)
	}
	if got := gitCmd(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatal("HEAD moved without a change")
	}
	checkClean(t, dir)

	// Mixed batch: one real change, one equal to HEAD.
	h := apply(t, r, "mixed", put("a.md", "A2\n"), put("b.md", "B\n"))
	if got := gitCmd(t, dir, "log", "-1", "--name-status", "--format="); got != "A\tb.md" {
		t.Fatalf("mixed batch name-status:\n%s", got)
	}
	checkClean(t, dir)

	info, err := r.LastCommit()
	if err != nil || info.Hash != h || info.Subject != "mixed" || info.Author != who || !info.When.Equal(when) {
		t.Fatalf("LastCommit = %+v, %v", info, err)
	}
	if got, _ := r.Changed(h1, h); !reflect.DeepEqual(got, []string{"a.md", "b.md", "bin/run.sh", "x/y/z/deep.md"}) {
		t.Fatalf("Changed = %q", got)
	}
	if got, _ := r.Changed("", h1); !reflect.DeepEqual(got, []string{"a.md", "x/keep.md", "x/y/z/deep.md"}) {
		t.Fatalf("Changed from empty = %q", got)
	}
	if b, ok, err := r.ReadHead("x/keep.md"); err != nil || !ok || string(b) != "k\n" {
		t.Fatalf("ReadHead = %q %v %v", b, ok, err)
	}
	if _, ok, err := r.ReadHead("x/y/z/deep.md"); err != nil || ok {
		t.Fatalf("ReadHead(deleted) ok=%v err=%v", ok, err)
	}
	if got := gitCmd(t, dir, "rev-list", "--count", "HEAD"); got != "4" {
		t.Fatalf("commit count %s, want 4", got)
	}
}

// TestCommitWithoutWorktree: Commit records content that is not (yet) on
// disk; git then sees the work tree as differing, not the index.
func TestCommitWithoutWorktree(t *testing.T) {
	r, dir := tempRepo(t)
	if _, err := r.Commit([]Change{put("m.md", "x\n")}, "c", who, when); err != nil {
		t.Fatal(err)
	}
	gitCmd(t, dir, "fsck", "--strict", "--no-progress")
	if got := gitCmd(t, dir, "status", "--porcelain"); got != "D m.md" {
		t.Fatalf("status = %q, want the file deleted in the work tree only", got)
	}
	os.WriteFile(filepath.Join(dir, "m.md"), []byte("x\n"), 0o644)
	checkClean(t, dir)
}

// TestInteropWithGitCLI mixes our commits with the git CLI's.
func TestInteropWithGitCLI(t *testing.T) {
	r, dir := tempRepo(t)
	apply(t, r, "ours", put("a.md", "1\n"))
	os.WriteFile(filepath.Join(dir, "c.md"), []byte("cli\n"), 0o644)
	gitCmd(t, dir, "add", "c.md")
	gitCmd(t, dir, "commit", "-q", "-m", "theirs")
	apply(t, r, "ours again", put("a.md", "2\n"), del("c.md"))
	checkClean(t, dir)
	if got := gitCmd(t, dir, "log", "--format=%s"); got != "ours again\ntheirs\nours" {
		t.Fatalf("log:\n%s", got)
	}
	// A file replaced by a directory and back.
	apply(t, r, "dir", del("a.md"), put("a.md/inner.md", "i\n"))
	checkClean(t, dir)
}

func TestIndexLockHeld(t *testing.T) {
	r, dir := tempRepo(t)
	r.lockTry = 20 * time.Millisecond
	lock := filepath.Join(dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit([]Change{put("a.md", "a")}, "m", who, when); !errors.Is(err, ErrIndexLocked) {
		t.Fatalf("Commit with held lock = %v", err)
	}
	os.Remove(lock)
	if _, err := r.Commit([]Change{put("a.md", "a")}, "m", who, when); err != nil {
		t.Fatal(err)
	}
}

func TestBadPaths(t *testing.T) {
	r, _ := tempRepo(t)
	for _, p := range []string{"", "/abs", "../x", "a/../b", "a//b", ".git/config", "sub/.GIT/x", "a/./b"} {
		if _, err := r.Commit([]Change{put(p, "x")}, "m", who, when); err == nil {
			t.Errorf("Commit(%q) accepted", p)
		}
	}
	if _, err := r.Commit([]Change{put("a", "x"), put("a/b", "y")}, "m", who, when); err == nil {
		t.Error("file and file-inside-it in one batch accepted")
	}
}

func TestApplyBeforeCommitHook(t *testing.T) {
	r, dir := tempRepo(t)
	boom := errors.New("crash")
	r.BeforeCommit = func() error { return boom }
	if _, err := r.Apply([]Change{put("m/a.md", "a\n")}, "m", who, when); !errors.Is(err, boom) {
		t.Fatalf("Apply = %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "m/a.md")); err != nil || string(b) != "a\n" {
		t.Fatalf("work tree file = %q, %v", b, err)
	}
	if got, err := r.Dirty(); err != nil || !reflect.DeepEqual(got, []string{"m/a.md"}) {
		t.Fatalf("Dirty after crash = %q, %v", got, err)
	}
	r.BeforeCommit = nil
	if _, err := r.Commit([]Change{put("m/a.md", "a\n")}, "recover", who, when); err != nil {
		t.Fatal(err)
	}
	checkClean(t, dir)
	if got, _ := r.Dirty(); len(got) != 0 {
		t.Fatalf("Dirty after recovery = %q", got)
	}
}

func TestDirtyAndIgnored(t *testing.T) {
	r, dir := tempRepo(t)
	apply(t, r, "base",
		put(".gitignore", "*.swp\n/.mindmount/cache/\nsed??????\n"),
		put("keep.md", "k\n"), put("mod.md", "m\n"), put("gone.md", "g\n"), put("sub/.gitignore", "local.txt\n"),
		put("sub/x.md", "x\n"))
	os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755)
	os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), []byte("excluded.md\n"), 0o644)
	r.ReloadIgnores()
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("mod.md", "changed\n")
	os.Remove(filepath.Join(dir, "gone.md"))
	write("new.md", "n\n")
	write(".mod.md.swp", "swap")
	write("sedAb12Cd", "tmp")
	write("sed-notes.md", "real memory\n")
	write(".mindmount/cache/vec.bin", "v")
	write("sub/local.txt", "l")
	write("local.txt", "not ignored at the root")
	write("excluded.md", "e")
	// Same content, new mtime: stat differs, content does not.
	write("keep.md", "k\n")
	got, err := r.Dirty()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"gone.md", "local.txt", "mod.md", "new.md", "sed-notes.md"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Dirty = %q\nwant   %q", got, want)
	}
	for p, ign := range map[string]bool{
		".x.swp": true, "a/b/c.swp": true, ".mindmount/cache/v": true, ".mindmount/cache/": true, ".mindmount/cursor.json": false,
		"sed123456": true, "sed-notes.md": false, "sub/local.txt": true, "local.txt": false, "excluded.md": true,
		".git/HEAD": true, "user_memory/a.md": false,
	} {
		if r.Ignored(p) != ign {
			t.Errorf("Ignored(%q) = %v, want %v", p, !ign, ign)
		}
	}
	// Committing a .gitignore reloads the patterns.
	apply(t, r, "ignore new", put(".gitignore", "*.swp\n/.mindmount/cache/\nsed??????\nnew.md\n"))
	if !r.Ignored("new.md") {
		t.Error("Commit of .gitignore did not reload the patterns")
	}
}

// TestIndexStatMatchesGit: the index entries we write carry the same stat
// data git itself records, so git trusts them without re-reading files.
func TestIndexStatMatchesGit(t *testing.T) {
	r, dir := tempRepo(t)
	apply(t, r, "one", put("a.md", "a\n"), put("d/e/f.md", "f\n"), Change{Path: "x.sh", Data: []byte("x"), Exec: true})
	apply(t, r, "two", put("a.md", "a2\n"), put("b.md", "b\n"))
	ours := gitCmd(t, dir, "ls-files", "--debug")
	gitCmd(t, dir, "update-index", "--really-refresh")
	theirs := gitCmd(t, dir, "ls-files", "--debug")
	if ours != theirs {
		t.Fatalf("index stat data differs from git's own:\nours:\n%s\ngit:\n%s", ours, theirs)
	}
	checkClean(t, dir)
}

// TestCheckPath is the path rule of issue 14 defects 7 and 10.
func TestCheckPath(t *testing.T) {
	for _, p := range []string{`a\b.md`, "z\n\n## SYSTEM.md", "tab\t.md", "del\x7f", ".Git/x", "x/.GIT/y", ".git", "a/.gIt"} {
		if err := CheckPath(p); !errors.Is(err, ErrBadPath) {
			t.Errorf("CheckPath(%q) = %v, want ErrBadPath", p, err)
		}
	}
	for _, p := range []string{"user_memory/likes-tea.md", ".gitignore", "x/.github/y", "notes/.gitkeep", "é.md"} {
		if err := CheckPath(p); err != nil {
			t.Errorf("CheckPath(%q) = %v", p, err)
		}
	}
}

func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"a/b.md", `a\b`, "x/.GIT/y", "a\nb", "../x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if CheckPath(p) != nil {
			return
		}
		if strings.ContainsAny(p, "\\\x00\n\r") || strings.HasPrefix(p, "/") {
			t.Fatalf("accepted %q", p)
		}
		for _, part := range strings.Split(p, "/") {
			if part == "" || part == "." || part == ".." || strings.EqualFold(part, ".git") {
				t.Fatalf("accepted %q", p)
			}
		}
	})
}
