package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// newProject makes a bare project repository with one code commit on
// main, as a hosting service holds it.
func newProject(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	work := filepath.Join(root, "work")
	bare := filepath.Join(root, "project.git")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	gitOut(t, work, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(work, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, work, "add", ".")
	gitOut(t, work, "commit", "-q", "-m", "code")
	gitOut(t, root, "clone", "-q", "--bare", work, bare)
	return bare
}

// TestInitProjectBranch: the first init creates the memory as an orphan
// branch of the project (no history shared with the code) and pushes it;
// a second init elsewhere clones that branch; recall works on the clone
// like on any repository, and dreams there wait for review.
func TestInitProjectBranch(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	project := newProject(t)
	first := filepath.Join(t.TempDir(), "mem1")
	out := runCmd(t, "init", first, "--project-branch", project)
	if !strings.Contains(out, "Pushed it as the orphan branch mindmount/memory") {
		t.Fatalf("output:\n%s", out)
	}
	if b := gitOut(t, first, "rev-parse", "--abbrev-ref", "HEAD"); b != "mindmount/memory" {
		t.Fatalf("branch %s", b)
	}
	code := gitOut(t, project, "rev-parse", "main")
	mem := gitOut(t, project, "rev-parse", "mindmount/memory")
	cmd := exec.Command("git", "merge-base", code, mem)
	cmd.Dir = project
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("the memory branch shares history with the code: %s", out)
	}
	if files := gitOut(t, project, "ls-tree", "--name-only", "mindmount/memory"); strings.Contains(files, "main.go") || !strings.Contains(files, "character.md") {
		t.Fatalf("memory branch files:\n%s", files)
	}

	second := filepath.Join(t.TempDir(), "mem2")
	out = runCmd(t, "init", second, "--project-branch", project)
	if !strings.Contains(out, "Cloned mindmount/memory") {
		t.Fatalf("output:\n%s", out)
	}
	if h := gitOut(t, second, "rev-parse", "HEAD"); h != mem {
		t.Fatalf("clone at %s, want %s", h, mem)
	}
	cfg, err := os.ReadFile(filepath.Join(second, ".git", "mindmount", "config"))
	if err != nil || !strings.Contains(string(cfg), "merge: review") {
		t.Fatalf("operator file: %q %v", cfg, err)
	}
	if err := os.WriteFile(filepath.Join(second, "user_memory", "cache-sqlite.md"),
		[]byte("---\ndescription: The cache uses SQLite\n---\n# Cache Sqlite\n\n## Fact\nUse SQLite for the cache.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := runCmd(t, "recall", second, "sqlite cache"); !strings.Contains(out, "cache-sqlite") {
		t.Fatalf("recall on the clone:\n%s", out)
	}
}
