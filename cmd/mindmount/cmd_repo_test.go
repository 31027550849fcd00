package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every command that takes a repository refuses a plain folder and a plain
// git repository with the same one line (issue 11.6). mindmount serve takes a
// serve root, not a repository, and mindmount hook says the same line but
// exits 0 (a hook never fails the agent), so neither is in the list; nor is
// mindmount hooks install, whose git hooks serve any clone, even an empty one.
func TestCommandsRefuseNonRepositories(t *testing.T) {
	plain := mgFolder(t, map[string]string{"notes.md": "# hi\n"})
	gitOnly := mgFolder(t, map[string]string{"notes.md": "# hi\n"})
	if out, err := exec.Command("git", "-C", gitOnly, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	mnt := t.TempDir()
	wants := map[string]string{
		plain:   plain + " is not a mindmount repository: it holds other files and no memory; name the repository's folder, or make a new one with mindmount init NEWDIR",
		gitOnly: gitOnly + " is not a mindmount repository: it is a git repository without character.md or user.md; add mindmount's files with mindmount init " + gitOnly,
	}
	for _, dir := range []string{plain, gitOnly} {
		want := wants[dir]
		for _, args := range [][]string{
			{"check", dir}, {"index", dir}, {"context", dir}, {"recall", dir, "tea"},
			{"reindex", dir}, {"consolidate", dir}, {"status", dir},
			{"mount", dir, mnt}, {"watch", dir}, {"mcp", dir},
			{"run", "--repo", dir, "--", "true"},
			{"sync", dir}, {"remote", "show", dir},
		} {
			_, errs, code := mgRun(args...)
			if line := "mindmount " + args[0] + ": " + want; code != 1 || strings.TrimSpace(errs) != line {
				t.Errorf("%q: exit %d, stderr\n%s\nwant exit 1 and\n%s", args, code, errs, line)
			}
		}
	}
}

// "check DIR/user_memory" and "check FILE" report exactly what a check of the
// whole repository reports for those files.
func TestCheckPathInsideRepository(t *testing.T) {
	files := map[string]string{}
	for k, v := range mgFiles {
		files[k] = v
	}
	files["user_memory/bad.md"] = "---\ndescription: x\ncolour: red\n---\n"
	files["docs/bad.md"] = "---\ncolour: red\n---\n"
	dir := mgRepo(t, files)

	whole, _, _ := mgRun("check", dir)
	var wantUser []string
	for _, l := range strings.Split(strings.TrimSpace(whole), "\n") {
		if strings.HasPrefix(l, "user_memory/") {
			wantUser = append(wantUser, l)
		}
	}
	if len(wantUser) == 0 {
		t.Fatalf("whole-repository check found nothing under user_memory/:\n%s", whole)
	}
	sub, _, code := mgRun("check", filepath.Join(dir, "user_memory"))
	if code != 1 || strings.TrimSpace(sub) != strings.Join(wantUser, "\n") {
		t.Errorf("check user_memory: exit %d\n%s\nwant\n%s", code, sub, strings.Join(wantUser, "\n"))
	}
	one, _, code := mgRun("check", filepath.Join(dir, "user_memory", "bad.md"))
	if code != 1 || strings.TrimSpace(one) != strings.Join(wantUser, "\n") {
		t.Errorf("check FILE: exit %d\n%s", code, one)
	}
	good, _, code := mgRun("check", filepath.Join(dir, "user_memory", "tea.md"))
	if code != 0 || !strings.Contains(good, "1 file checked, all valid") {
		t.Errorf("check valid FILE: exit %d\n%s", code, good)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := mgRun("check", filepath.Join(dir, "notes.txt")); code == 0 || !strings.Contains(errs, "not a memory file") {
		t.Errorf("check of a non-memory file: exit %d, %q", code, errs)
	}
}
