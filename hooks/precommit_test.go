package hooks

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git runs the git CLI in dir with a clean, fixed identity.
func runGit(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := runGit(t, dir, args...)
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(out)
}

func write(t *testing.T, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// clone makes a repository with a memory and a read_only persona, with
// mindmount's hooks installed.
func clone(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mustGit(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "character.md", "---\ndescription: persona\nread_only: true\n---\n# Persona\n")
	write(t, dir, "user_memory/likes-coffee.md", baseMem)
	mustGit(t, dir, "add", "-A")
	mustGit(t, dir, "commit", "-q", "-m", "start")
	if err := Install(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestPreCommitWithGitCLI(t *testing.T) {
	mindmountOnPath(t)
	dir := clone(t)

	hook, err := os.ReadFile(filepath.Join(dir, ".git", "hooks", "pre-commit"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hook), "exec mindmount hook pre-commit") || strings.Contains(string(hook), os.TempDir()) {
		t.Fatalf("hook does not call mindmount by name:\n%s", hook)
	}

	// Invalid: an unknown key. The message is the daemon's (memgraph.Validate).
	write(t, dir, "user_memory/bad.md", "---\ndescription: x\ncolour: red\n---\n# Bad\n")
	mustGit(t, dir, "add", "user_memory/bad.md")
	out, err := runGit(t, dir, "commit", "-q", "-m", "bad")
	if err == nil {
		t.Fatalf("invalid memory committed:\n%s", out)
	}
	if !strings.Contains(out, "user_memory/bad.md:3: ") || !strings.Contains(out, "colour") {
		t.Fatalf("refusal lacks path:line and the daemon's message:\n%s", out)
	}
	mustGit(t, dir, "rm", "-q", "--cached", "user_memory/bad.md")
	os.Remove(filepath.Join(dir, "user_memory", "bad.md"))

	// A bad repository setting is refused like an invalid memory.
	write(t, dir, ".mindmount/settings", "index_tokens: lots\n")
	mustGit(t, dir, "add", "-f", ".mindmount/settings")
	if out, err := runGit(t, dir, "commit", "-q", "-m", "settings"); err == nil || !strings.Contains(out, ".mindmount/settings:1: ") {
		t.Fatalf("bad settings not refused (err %v):\n%s", err, out)
	}
	mustGit(t, dir, "rm", "-q", "--cached", ".mindmount/settings")
	os.Remove(filepath.Join(dir, ".mindmount", "settings"))

	// read_only: a change to the persona is refused.
	write(t, dir, "character.md", "---\ndescription: persona\nread_only: true\n---\n# Persona, changed\n")
	mustGit(t, dir, "add", "character.md")
	if out, err := runGit(t, dir, "commit", "-q", "-m", "ro"); err == nil || !strings.Contains(out, "character.md: read_only: true protects this file") {
		t.Fatalf("read_only change not refused (err %v):\n%s", err, out)
	}
	mustGit(t, dir, "reset", "-q", "HEAD", "character.md")
	mustGit(t, dir, "checkout", "--", "character.md")

	// read_only: so is its deletion (git rm), and the file can be had back.
	mustGit(t, dir, "rm", "-q", "character.md")
	if out, err := runGit(t, dir, "commit", "-q", "-m", "rm ro"); err == nil || !strings.Contains(out, "character.md: read_only: true protects this file; its deletion is not committed") {
		t.Fatalf("read_only deletion not refused (err %v):\n%s", err, out)
	}
	if _, err := runGit(t, dir, "cat-file", "-e", "HEAD:character.md"); err != nil {
		t.Fatal("the deletion reached HEAD")
	}
	mustGit(t, dir, "reset", "-q", "HEAD", "character.md")
	mustGit(t, dir, "checkout", "--", "character.md")
	if b, err := os.ReadFile(filepath.Join(dir, "character.md")); err != nil || !strings.Contains(string(b), "# Persona\n") {
		t.Fatalf("character.md not back: %q %v", b, err)
	}

	// Valid: accepted.
	write(t, dir, "user_memory/likes-tea.md", strings.ReplaceAll(baseMem, "coffee", "tea"))
	mustGit(t, dir, "add", "user_memory/likes-tea.md")
	if out, err := runGit(t, dir, "commit", "-q", "-m", "tea"); err != nil {
		t.Fatalf("valid commit refused: %v\n%s", err, out)
	}
	// A file that is not a memory is not held to the memory format.
	write(t, dir, "notes/s1.txt", "---\ncolour: red\n")
	mustGit(t, dir, "add", "notes/s1.txt")
	if out, err := runGit(t, dir, "commit", "-q", "-m", "notes"); err != nil {
		t.Fatalf("a plain file refused: %v\n%s", err, out)
	}
	// The inbox is never committed, by the daemon or by a person's git
	// commit (the gate's rule, whoever asks).
	write(t, dir, "transcripts/s1.md", "---\ncolour: red\n")
	mustGit(t, dir, "add", "-f", "transcripts/s1.md")
	if out, err := runGit(t, dir, "commit", "-q", "-m", "transcript"); err == nil || !strings.Contains(out, "transcripts/s1.md: transcripts/ is the consolidation inbox") {
		t.Fatalf("a transcript committed by hand: %v\n%s", err, out)
	}
}

func TestInstallIdempotentAndUninstall(t *testing.T) {
	dir := clone(t)
	if err := Install(dir); err != nil {
		t.Fatal(err)
	}
	attrs, _ := os.ReadFile(filepath.Join(dir, ".git", "info", "attributes"))
	if strings.Count(string(attrs), "merge=mindmount-memory") != 1 {
		t.Fatalf("attributes:\n%s", attrs)
	}
	if got := mustGit(t, dir, "config", "merge.mindmount-memory.driver"); got != "mindmount merge-memory %O %A %B %P" {
		t.Fatalf("driver %q", got)
	}
	if err := Uninstall(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); !os.IsNotExist(err) {
		t.Fatal("hook left behind")
	}
	if out, err := runGit(t, dir, "config", "merge.mindmount-memory.driver"); err == nil {
		t.Fatalf("driver left behind: %s", out)
	}
	// A foreign hook is never replaced.
	write(t, dir, ".git/hooks/pre-commit", "#!/bin/sh\nexit 0\n")
	if err := Install(dir); err == nil {
		t.Fatal("foreign hook replaced")
	}
}

// TestMemoryDriverWithGitMerge runs the installed drivers through a real
// "git merge": the access logs union, the conflicting fact leaves a
// retired sibling, and no conflict marker reaches a file.
func TestMemoryDriverWithGitMerge(t *testing.T) {
	mindmountOnPath(t)
	dir := clone(t)
	const rel = "user_memory/likes-coffee.md"
	mustGit(t, dir, "checkout", "-q", "-b", "laptop")
	write(t, dir, rel, strings.Replace(strings.Replace(baseMem, "specialty coffee.", "espresso.", 1), "used, 31.08.26\n", "used, 31.08.26\nused, 02.09.26\n", 1))
	mustGit(t, dir, "commit", "-q", "-am", "laptop")
	mustGit(t, dir, "checkout", "-q", "main")
	write(t, dir, rel, strings.Replace(strings.Replace(baseMem, "specialty coffee.", "filter coffee.", 1), "used, 31.08.26\n", "used, 31.08.26\nused, 01.09.26\n", 1))
	mustGit(t, dir, "commit", "-q", "-am", "server")
	out, err := runGit(t, dir, "merge", "--no-edit", "laptop")
	if err != nil {
		t.Fatalf("git merge: %v\n%s", err, out)
	}
	got, _ := os.ReadFile(filepath.Join(dir, rel))
	if strings.Contains(string(got), "<<<<") || !strings.Contains(string(got), "filter coffee") {
		t.Fatalf("merged file:\n%s", got)
	}
	for _, l := range []string{"used, 01.09.26", "used, 02.09.26"} {
		if !strings.Contains(string(got), l) {
			t.Fatalf("lost %q:\n%s", l, got)
		}
	}
	sib, err := os.ReadFile(filepath.Join(dir, "user_memory", "likes-coffee-2.md"))
	if err != nil || !strings.Contains(string(sib), "espresso") || !strings.Contains(string(sib), "superseded_by: user_memory/likes-coffee") {
		t.Fatalf("sibling: %v\n%s\ngit said:\n%s", err, sib, out)
	}
	if parents := mustGit(t, dir, "rev-list", "--parents", "-n1", "HEAD"); len(strings.Fields(parents)) != 3 {
		t.Fatalf("not a merge commit: %s", parents)
	}
}

// TestPreCommitFirstCommit: with no HEAD yet, everything staged is new and
// judged.
func TestPreCommitFirstCommit(t *testing.T) {
	mindmountOnPath(t)
	dir := t.TempDir()
	mustGit(t, dir, "init", "-q", "-b", "main")
	if err := Install(dir); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "user_memory/bad.md", "---\nstatus: active\n---\n# No description\n")
	mustGit(t, dir, "add", "-A")
	if out, err := runGit(t, dir, "commit", "-q", "-m", "first"); err == nil || !strings.Contains(out, "user_memory/bad.md:1: missing description") {
		t.Fatalf("first commit not judged (err %v):\n%s", err, out)
	}
}

func FuzzParseDiffIndex(f *testing.F) {
	f.Add([]byte(":100644 100644 " + strings.Repeat("a", 40) + " " + strings.Repeat("b", 40) + " M\x00user_memory/x.md\x00"))
	f.Add([]byte(":000000 100644 0 1 A\x00a.md\x00:1 2 3 4\x00"))
	f.Add([]byte("0 0 0 0 0\x00")) // an entry without a path (found by the fuzzer)
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := parseDiffIndex(raw)
		if err != nil {
			return
		}
		for _, s := range got {
			if s.path == "" || s.newID == "" && s.status != 'D' && s.newID != "" {
				t.Fatalf("bad entry %+v", s)
			}
		}
	})
}

// TestMemoryDriverDeleteVsChange: a memory deleted on one branch and
// changed on the other, merged with "git merge" and the installed drivers,
// both ways round. git runs no merge driver for a modify/delete conflict;
// what must hold is that the change is never silently lost: the merge
// stops and names the file, the changed version is in the work tree, and
// committing it (through the pre-commit hook) keeps the change.
func TestMemoryDriverDeleteVsChange(t *testing.T) {
	const rel = "user_memory/likes-coffee.md"
	changed := strings.Replace(baseMem, "used, 31.08.26\n", "used, 31.08.26\nused, 04.09.26\n", 1)
	for _, deleteHere := range []bool{true, false} {
		name := "changed here, deleted there"
		if deleteHere {
			name = "deleted here, changed there"
		}
		t.Run(name, func(t *testing.T) {
			mindmountOnPath(t)
			dir := clone(t)
			del := func() { mustGit(t, dir, "rm", "-q", rel); mustGit(t, dir, "commit", "-q", "-m", "delete") }
			change := func() { write(t, dir, rel, changed); mustGit(t, dir, "commit", "-q", "-am", "change") }
			mustGit(t, dir, "checkout", "-q", "-b", "laptop")
			if deleteHere {
				change()
			} else {
				del()
			}
			mustGit(t, dir, "checkout", "-q", "main")
			if deleteHere {
				del()
			} else {
				change()
			}
			out, err := runGit(t, dir, "merge", "--no-edit", "laptop")
			if err == nil {
				t.Fatalf("git merge went through a modify/delete conflict:\n%s\n%s", out, mustGit(t, dir, "show", "--stat", "HEAD"))
			}
			if !strings.Contains(out, "CONFLICT (modify/delete): "+rel) {
				t.Fatalf("merge output does not name the file:\n%s", out)
			}
			got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
			if err != nil || string(got) != changed {
				t.Fatalf("the changed version is not in the work tree (%v):\n%s", err, got)
			}
			mustGit(t, dir, "add", rel)
			mustGit(t, dir, "commit", "-q", "--no-edit")
			if show := mustGit(t, dir, "show", "HEAD:"+rel); !strings.Contains(show, "used, 04.09.26") {
				t.Fatalf("merge commit lost the change:\n%s", show)
			}
			if parents := mustGit(t, dir, "rev-list", "--parents", "-n1", "HEAD"); len(strings.Fields(parents)) != 3 {
				t.Fatalf("not a merge commit: %s", parents)
			}
		})
	}
}
