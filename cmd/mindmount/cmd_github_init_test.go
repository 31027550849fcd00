package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
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

// TestIngestFileAndRecall: "ingest --file --source" consolidates a text
// as one batch with its provenance into a waiting dream (merge: review of
// the project clone), a second ingest of the same text finds nothing new,
// and "github recall --file" prints a comment only for what is relevant.
func TestIngestFileAndRecall(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	srv := llmtest.New(t)
	srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: `{"facts":[{"kind":"decision","slug":"cache-uses-sqlite","description":"Decision: use SQLite for the cache","fact":"The cache is stored in SQLite.","topic":"cache-backend","keywords":["cache","sqlite"]}]}`})
	srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
	t.Setenv("MINDMOUNT_LLM", "")
	t.Setenv("OLLAMA_HOST", srv.OllamaURL())
	t.Setenv("GITHUB_TOKEN", "")
	dir := filepath.Join(t.TempDir(), "mem")
	runCmd(t, "init", dir, "--project-branch", newProject(t))
	pr := filepath.Join(t.TempDir(), "pr.md")
	os.WriteFile(pr, []byte("Cache in SQLite\nWe decided to use SQLite for the cache.\n"), 0o644)
	out := runCmd(t, "ingest", dir, "--file", pr, "--source", "PR#7", "--url", "https://github.example/o/r/pull/7")
	if !strings.Contains(out, "PR#7: 1 added") || !strings.Contains(out, "mindmount/dream/1 waits") {
		t.Fatalf("ingest:\n%s", out)
	}
	m := gitOut(t, dir, "show", "mindmount/dream/1:user_memory/cache-uses-sqlite.md")
	if !strings.Contains(m, "source: PR#7 https://github.example/o/r/pull/7") {
		t.Fatalf("memory:\n%s", m)
	}
	if out := runCmd(t, "ingest", dir, "--file", pr, "--source", "PR#7", "--url", "https://github.example/o/r/pull/7"); !strings.Contains(out, "PR#7: nothing new") {
		t.Fatalf("ingest again:\n%s", out)
	}
	// Recall reads the live branch: approve the dream as a merged pull
	// request would land it.
	tip := gitOut(t, dir, "rev-parse", "mindmount/dream/1")
	runCmd(t, "review", "approve", "1", "--tip", tip, dir)
	q := filepath.Join(t.TempDir(), "q.md")
	os.WriteFile(q, []byte("Warm the sqlite cache\nPreload the cache at boot.\n"), 0o644)
	if out := runCmd(t, "github", "recall", dir, "--file", q); !strings.Contains(out, "<!-- mindmount:recall -->") || !strings.Contains(out, "cache-uses-sqlite.md") {
		t.Fatalf("recall:\n%s", out)
	}
	os.WriteFile(q, []byte("Kubernetes ingress\nTLS termination at the edge.\n"), 0o644)
	if out := runCmd(t, "github", "recall", dir, "--file", q); !strings.Contains(out, "nothing relevant") {
		t.Fatalf("recall of nothing relevant:\n%s", out)
	}
}
