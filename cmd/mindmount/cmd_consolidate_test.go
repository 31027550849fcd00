package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

func TestConsolidateCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := t.TempDir()
	for _, c := range [][]string{{"init", "-q", "-b", "main"}, {"config", "user.name", "t"}, {"config", "user.email", "t@x"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, c...)...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	os.MkdirAll(filepath.Join(dir, "transcripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "user.md"), []byte("# User\n"), 0o644) // a mindmount repository, not a plain git one
	os.WriteFile(filepath.Join(dir, "transcripts", "s1.jsonl"), []byte(`{"role":"user","content":"I speak Italian."}`+"\n"), 0o644)
	exec.Command("git", "-C", dir, "add", ".").Run()
	if out, err := exec.Command("git", "-C", dir, "commit", "-qm", "init").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	srv := llmtest.New(t)
	srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: `{"facts":[{"kind":"user","slug":"speaks-italian","description":"Speaks Italian","fact":"You speak Italian.","episode":""}]}`})
	srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
	t.Setenv("MINDMOUNT_LLM", "")
	t.Setenv("OLLAMA_HOST", srv.OllamaURL())
	var out, errOut bytes.Buffer
	if code := run([]string{"consolidate", dir, "--model", "fake"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "transcripts/s1.jsonl#1: 1 added") {
		t.Fatalf("output %q", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "user_memory", "speaks-italian.md")); err != nil {
		t.Fatal(err)
	}
	log, _ := exec.Command("git", "-C", dir, "log", "-1", "--format=%an %s").Output()
	if !strings.HasPrefix(string(log), "consolidator consolidate transcripts/s1.jsonl#1") {
		t.Fatalf("log %q", log)
	}

	// No model: a clear message and a non-zero exit.
	os.WriteFile(filepath.Join(dir, "transcripts", "s2.md"), []byte("User: I moved to Rome.\n"), 0o644)
	srv.Close()
	out.Reset()
	errOut.Reset()
	if code := run([]string{"consolidate", dir}, &out, &errOut); code == 0 {
		t.Fatal("exit 0 without a model")
	}
	if !strings.Contains(errOut.String(), "no model answers at "+srv.OllamaURL()) {
		t.Fatalf("stderr %q", errOut.String())
	}
	// The three ways out, in the one line of the error.
	line := strings.TrimSpace(errOut.String())
	for _, way := range []string{"Ollama", "MINDMOUNT_LLM=openai", "OPENAI_API_KEY", "MINDMOUNT_LLM=anthropic", "ANTHROPIC_API_KEY", "scripts/fakellm"} {
		if strings.Contains(line, "\n") || !strings.Contains(line, way) {
			t.Errorf("the error does not name %s in one line: %q", way, line)
		}
	}
	if code := run([]string{"consolidate", t.TempDir()}, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "is not a mindmount repository: it is empty") {
		t.Fatalf("not a repo: %q", errOut.String())
	}
}

func TestMergeCursorCommand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	o := write("o", `{"version":1,"transcripts":{"transcripts/a":{"messages":5,"hash":"x"}}}`)
	a := write("a", `{"version":1,"transcripts":{"transcripts/a":{"messages":9,"hash":"y"}}}`)
	b := write("b", `{"version":1,"transcripts":{"transcripts/b":{"messages":2,"hash":"z"}}}`)
	var out, errOut bytes.Buffer
	if code := run([]string{"merge-cursor", o, a, b}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got, _ := os.ReadFile(a)
	if !strings.Contains(string(got), `"messages": 9`) || !strings.Contains(string(got), "transcripts/b") {
		t.Fatalf("merged:\n%s", got)
	}
}
