package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mgRepo writes a small memory repository for the check/index/context
// tests and commits it with the git CLI, as "mindmount init" would have.
func mgRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := mgFolder(t, files)
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "--allow-empty", "-m", "seed"},
	} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// mgFolder writes files into a new folder that is not a repository.
func mgFolder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mgRun(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

var mgFiles = map[string]string{
	"character.md":              "---\ndescription: Persona\nread_only: true\n---\n# Character\n\nYou are kind.\n",
	"user.md":                   "# User\n\nAda.\n",
	"user_memory/tea.md":        "---\ndescription: Likes tea\n---\n# Tea\n\n## Fact\nTea.\n\n## Access log\nused, 01.01.26\nused, 02.01.26\n",
	"user_memory/coffee.md":     "---\ndescription: Likes coffee\n---\n# Coffee\n\n## Fact\nCoffee.\n\n## Access log\nused, 01.01.26\n",
	"user_memory/old.md":        "---\ndescription: Hated tea\nstatus: contradicted\n---\n## Access log\nused, 01.01.26\nused, 01.01.26\nused, 01.01.26\n",
	"character_memory/brief.md": "---\ndescription: Be brief\n---\n",
	"docs/guide.md":             "---\ndescription: A guide\n---\n",
}

func TestCheckCommand(t *testing.T) {
	dir := mgRepo(t, mgFiles)
	out, _, code := mgRun("check", dir)
	if code != 0 || out != "7 files checked, all valid\n" {
		t.Errorf("valid repo: exit %d, output %q", code, out)
	}
	bad := map[string]string{
		"user_memory/bad.md":  "---\ndescription: x\ncolour: red\n---\n",
		"user_memory/none.md": "# No frontmatter\n",
	}
	for k, v := range mgFiles {
		bad[k] = v
	}
	dir = mgRepo(t, bad)
	out, errs, code := mgRun("check", dir)
	want := "user_memory/bad.md:3: unknown frontmatter key \"colour\"; allowed keys are description, status, supersedes, superseded_by, read_only, pinned, created, source, tags, topic, keywords, promoted_from\n" +
		"user_memory/none.md:1: missing frontmatter"
	if code != 1 || !strings.HasPrefix(out, want) || !strings.Contains(errs, "2 problems in 2 of 9 files") {
		t.Errorf("invalid repo: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if _, errs, code := mgRun("check", filepath.Join(dir, "missing")); code != 1 || !strings.Contains(errs, "does not exist") {
		t.Errorf("missing dir: exit %d, %q", code, errs)
	}
	if _, _, code := mgRun("check"); code != 2 {
		t.Errorf("no args: exit %d", code)
	}
}

func TestIndexCommand(t *testing.T) {
	dir := mgRepo(t, mgFiles)
	out, _, code := mgRun("index", dir)
	if code != 0 || !strings.Contains(out, "- user_memory/tea.md — Likes tea (uses: 2)\n- user_memory/coffee.md — Likes coffee (uses: 1)\n") || strings.Contains(out, "old.md") {
		t.Errorf("user index: exit %d\n%s", code, out)
	}
	out, _, code = mgRun("index", dir, "character")
	if code != 0 || !strings.Contains(out, "character_memory/brief.md — Be brief (uses: 0)") {
		t.Errorf("character index: exit %d\n%s", code, out)
	}
	if _, errs, code := mgRun("index", dir, "bogus"); code != 1 || !strings.Contains(errs, "want user or character") {
		t.Errorf("bad kind: exit %d %q", code, errs)
	}
}

func TestContextCommand(t *testing.T) {
	dir := mgRepo(t, mgFiles)
	out, _, code := mgRun("context", dir)
	for _, w := range []string{"You are kind.", "Ada.", "user_memory/tea.md", "character_memory/brief.md", "docs/guide.md — A guide"} {
		if !strings.Contains(out, w) {
			t.Errorf("context lacks %q:\n%s", w, out)
		}
	}
	if code != 0 || strings.Contains(out, "old.md") || strings.Contains(out, "read_only") {
		t.Errorf("context: exit %d\n%s", code, out)
	}
	out, _, code = mgRun("context", dir, "--max-bytes", "400")
	if code != 0 || len(out) > 400 || !strings.Contains(out, "<!-- mindmount: context truncated") {
		t.Errorf("small budget: exit %d, %d bytes\n%s", code, len(out), out)
	}
	out, _, code = mgRun("context", dir, "--max-tokens", "100")
	if code != 0 || len(out) > 400 || !strings.Contains(out, "(budget 400)") {
		t.Errorf("token budget: exit %d, %d bytes\n%s", code, len(out), out)
	}
	if _, _, code := mgRun("context", dir, "--max-tokens", "100", "--max-bytes", "5"); code != 1 {
		t.Errorf("both limits: exit %d", code)
	}
}

// TestCheckReadOnlyAgainstGit judges read_only against the last commit made
// with the real git CLI.
func TestCheckReadOnlyAgainstGit(t *testing.T) {
	requireGitCLI(t)
	dir := mgRepo(t, mgFiles) // committed: read_only is judged against this commit
	if out, _, code := mgRun("check", dir); code != 0 {
		t.Fatalf("committed repo: exit %d\n%s", code, out)
	}
	os.WriteFile(filepath.Join(dir, "character.md"), []byte("---\ndescription: Persona\n---\n# Character\n\nYou are kind.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "user.md"), []byte("---\nread_only: true\n---\nAda.\n"), 0o644)
	out, _, code := mgRun("check", dir)
	if code != 1 || !strings.Contains(out, "character.md: read_only: true protects this file; the change is not committed") ||
		!strings.Contains(out, "user.md:2: read_only cannot be set, changed or removed by a write (last commit: not set)") {
		t.Errorf("read_only changes: exit %d\n%s", code, out)
	}
}
