package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git runs the real git CLI in dir.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func runCmd(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("mindmount %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
	return out.String()
}

func TestInit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := filepath.Join(t.TempDir(), "memory")
	out := runCmd(t, "init", dir, "--user", "Ada")
	if !strings.Contains(out, "Created mindmount repository") {
		t.Fatalf("output:\n%s", out)
	}
	gitOut(t, dir, "fsck", "--strict", "--no-progress")
	if st := gitOut(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("status not clean:\n%s", st)
	}
	log := gitOut(t, dir, "log", "--format=%an <%ae>|%s")
	if strings.Count(log, "\n") != 0 || !strings.HasPrefix(log, "mindmount <mindmount@mindmount.local>|mindmount init: add ") {
		t.Fatalf("want one mindmount commit, log:\n%s", log)
	}
	if b := gitOut(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); b != "main" {
		t.Fatalf("branch %s, want main", b)
	}
	// The cursor's merge driver is named by .gitattributes and defined in
	// the local config, so git itself resolves it.
	if a := gitOut(t, dir, "check-attr", "merge", ".mindmount/cursor.json"); !strings.HasSuffix(a, ": merge: mindmount-cursor") {
		t.Errorf("check-attr: %q", a)
	}
	if d := gitOut(t, dir, "config", "merge.mindmount-cursor.driver"); !strings.HasSuffix(d, "merge-cursor %O %A %B") {
		t.Errorf("merge driver: %q", d)
	}
	files := gitOut(t, dir, "ls-files")
	for _, want := range []string{"character.md", "user.md", "README.md", ".gitignore", "user_memory/.gitkeep",
		"character_memory/.gitkeep", "transcripts/.gitkeep"} {
		if !strings.Contains("\n"+files+"\n", "\n"+want+"\n") {
			t.Errorf("%s not committed; ls-files:\n%s", want, files)
		}
	}
	if u := gitOut(t, dir, "show", "HEAD:user.md"); !strings.Contains(u, "The user's name is Ada.") {
		t.Fatalf("user.md:\n%s", u)
	}

	// Re-running changes nothing and keeps the user's edit.
	edited := []byte("---\ndescription: mine\n---\n# Ada\n\nEdited.\n")
	os.WriteFile(filepath.Join(dir, "user.md"), edited, 0o644)
	out = runCmd(t, "init", dir, "--user", "Bob")
	if !strings.Contains(out, "already initialised") {
		t.Fatalf("re-run output:\n%s", out)
	}
	if n := gitOut(t, dir, "rev-list", "--count", "HEAD"); n != "1" {
		t.Fatalf("%s commits after re-run, want 1", n)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "user.md")); !bytes.Equal(b, edited) {
		t.Fatalf("user.md overwritten:\n%s", b)
	}

	// A missing file is added back in a commit of its own.
	gitOut(t, dir, "checkout", "--", "user.md")
	os.Remove(filepath.Join(dir, "README.md"))
	gitOut(t, dir, "rm", "-q", "--cached", "README.md")
	gitOut(t, dir, "commit", "-q", "-m", "drop readme")
	out = runCmd(t, "init", dir)
	if !strings.Contains(out, "README.md") {
		t.Fatalf("output:\n%s", out)
	}
	if got := gitOut(t, dir, "log", "-1", "--name-status", "--format=%s"); got != "mindmount init: add README.md\n\nA\tREADME.md" {
		t.Fatalf("last commit:\n%s", got)
	}
	gitOut(t, dir, "fsck", "--strict", "--no-progress")
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status not clean:\n%s", st)
	}

	// A repository from before a template rule existed gets the rule
	// appended to its own .gitignore, which keeps its own lines.
	ign := filepath.Join(dir, ".gitignore")
	old, _ := os.ReadFile(ign)
	mine := strings.Replace(string(old), "/.mindmount/index/\n", "", 1) + "my-notes/\n"
	os.WriteFile(ign, []byte(mine), 0o644)
	gitOut(t, dir, "commit", "-q", "-am", "older template, own rule")
	os.MkdirAll(filepath.Join(dir, ".mindmount", "index"), 0o755)
	os.WriteFile(filepath.Join(dir, ".mindmount", "index", "user_memory.md"), []byte("x\n"), 0o644)
	out = runCmd(t, "init", dir)
	if !strings.Contains(out, ".gitignore: the rules /.mindmount/index/") {
		t.Fatalf("output:\n%s", out)
	}
	if got := gitOut(t, dir, "log", "-1", "--format=%s"); got != "mindmount init: add /.mindmount/index/ to .gitignore" {
		t.Fatalf("last commit: %s", got)
	}
	now, _ := os.ReadFile(ign)
	if !strings.HasPrefix(string(now), mine) || strings.Count(string(now), "/.mindmount/index/") != 1 {
		t.Fatalf(".gitignore:\n%s", now)
	}
	gitOut(t, dir, "check-ignore", "-q", ".mindmount/index/user_memory.md")
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status not clean:\n%s", st)
	}
	if out = runCmd(t, "init", dir); !strings.Contains(out, "already initialised") {
		t.Fatalf("third run:\n%s", out)
	}
}

// TestInitExistingGitRepo: init completes a plain git repository with
// history and leaves its files alone.
func TestInitExistingGitRepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := t.TempDir()
	gitOut(t, dir, "init", "-q", "-b", "trunk")
	os.WriteFile(filepath.Join(dir, "character.md"), []byte("---\ndescription: my own\n---\n# Me\n"), 0o644)
	gitOut(t, dir, "add", "character.md")
	gitOut(t, dir, "commit", "-q", "-m", "mine")
	out := runCmd(t, "init", dir)
	if strings.Contains(out, "character.md") {
		t.Fatalf("init touched character.md:\n%s", out)
	}
	if n := gitOut(t, dir, "rev-list", "--count", "trunk"); n != "2" {
		t.Fatalf("%s commits on trunk, want 2", n)
	}
	if c := gitOut(t, dir, "show", "HEAD:character.md"); !strings.Contains(c, "my own") {
		t.Fatal("character.md replaced")
	}
	gitOut(t, dir, "fsck", "--strict", "--no-progress")
	if st := gitOut(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status not clean:\n%s", st)
	}
}

func TestInitUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"init"}, &out, &errb); code != 2 {
		t.Fatalf("init without DIR: exit %d", code)
	}
	if !strings.Contains(errb.String(), "usage: mindmount init DIR") {
		t.Fatalf("usage not printed:\n%s", errb.String())
	}
}

// TestInitRefusesForeignFolder: init never makes a repository of a folder
// that holds other files (a /tmp, a home) nor of someone else's git
// repository without --force, and never changes the mode of a folder that
// existed; the refusal changes nothing.
func TestInitRefusesForeignFolder(t *testing.T) {
	shared := t.TempDir()
	os.Chmod(shared, 0o777|os.ModeSticky)
	os.WriteFile(filepath.Join(shared, "someone-elses.txt"), []byte("x"), 0o644)
	var out, errb bytes.Buffer
	if code := run([]string{"init", shared}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "is not a git repository") || !strings.Contains(errb.String(), "--force") {
		t.Fatalf("init on a folder with other files: exit %d\n%s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "holds 1 other entry (someone-elses.txt) and") {
		t.Errorf("one file is not \"1 other entry\": %s", errb.String())
	}
	if _, err := os.Stat(filepath.Join(shared, ".git")); err == nil {
		t.Fatal("the refused init made a git repository")
	}
	mode := func(p string) os.FileMode {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode() & (os.ModePerm | os.ModeSticky)
	}
	runCmd(t, "init", "--force", shared)
	if m := mode(shared); m != 0o777|os.ModeSticky {
		t.Fatalf("init --force changed the folder's mode to %v", m)
	}
	if m := mode(filepath.Join(shared, "someone-elses.txt")); m != 0o644 {
		t.Fatalf("init --force changed a file's mode to %v", m)
	}
	if m := mode(filepath.Join(shared, "user.md")); m&0o077 != 0 {
		t.Fatalf("a file init made is not private: %v", m)
	}
	// An empty folder that exists keeps its mode; a new one is private.
	empty := t.TempDir()
	os.Chmod(empty, 0o755)
	runCmd(t, "init", empty)
	if m := mode(empty); m != 0o755 {
		t.Fatalf("init changed an existing empty folder's mode to %v", m)
	}
	fresh := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", fresh)
	if m := mode(fresh); m != 0o700 {
		t.Fatalf("a new repository is %v, want 0700", m)
	}
	if os.Getuid() != 0 {
		return
	}
	theirs := t.TempDir()
	gitOut(t, theirs, "init", "-q")
	os.Chown(theirs, 12345, 12345)
	errb.Reset()
	if code := run([]string{"init", theirs}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "owned by uid 12345") {
		t.Fatalf("init on someone else's repository: exit %d\n%s", code, errb.String())
	}
}
