package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/serve/httpapi"
)

func recallTestMemory(title, desc, fact, status string) string {
	return "---\ndescription: " + desc + "\nstatus: " + status + "\n---\n# " + title + "\n\n## Fact\n" + fact + "\n\n## Access log\n"
}

// recallTestRepo writes a small mindmount repository of memories (recall reads
// the working tree; the repository makes it a mindmount repository).
func recallTestRepo(t *testing.T) string {
	t.Helper()
	return mgRepo(t, map[string]string{
		"user.md":                            "# User\n",
		"user_memory/has-dog-pixel.md":       recallTestMemory("Has Dog Pixel", "Has a beagle called Pixel", "You have a beagle named Pixel. Pixel is four years old.", "active"),
		"user_memory/allergic-to-peanuts.md": recallTestMemory("Allergic To Peanuts", "Severe peanut allergy", "You are allergic to peanuts. You carry an EpiPen.", "active"),
		"user_memory/lives-in-berlin.md":     recallTestMemory("Lives In Berlin", "Lives in Berlin", "You live in Berlin.", "superseded"),
		"user_memory/lives-in-lisbon.md":     recallTestMemory("Lives In Lisbon", "Moved from Berlin to Lisbon", "You moved from Berlin to Lisbon.", "active"),
		"character_memory/be-brief.md":       recallTestMemory("Be Brief", "Keep answers short", "Keep answers short.", "active"),
	})
}

func runMindmount(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func recallJSON(t *testing.T, args ...string) []httpapi.Hit {
	t.Helper()
	out, errs, code := runMindmount(t, append([]string{"recall"}, args...)...)
	if code != 0 {
		t.Fatalf("recall %v: exit %d: %s", args, code, errs)
	}
	var hits []httpapi.Hit
	if err := json.Unmarshal([]byte(out), &hits); err != nil {
		t.Fatalf("recall --json output is not JSON: %v\n%s", err, out)
	}
	return hits
}

func TestRecallCommand(t *testing.T) {
	dir := recallTestRepo(t)

	hits := recallJSON(t, dir, "does the user have allergies?", "--json")
	if len(hits) != 1 || hits[0].Path != "user_memory/allergic-to-peanuts.md" || hits[0].Score <= 0 ||
		hits[0].Description != "Severe peanut allergy" || hits[0].Kind != "user" || hits[0].Status != "active" {
		t.Fatalf("allergies: %+v", hits)
	}

	// Flags may follow the arguments; the question may be several words.
	hits = recallJSON(t, dir, "where", "does", "the", "user", "live", "Berlin", "--json")
	if len(hits) != 1 || hits[0].Path != "user_memory/lives-in-lisbon.md" {
		t.Fatalf("retired memory returned or answer missing: %+v", hits)
	}
	hits = recallJSON(t, dir, "Berlin", "--all", "--json")
	if len(hits) != 2 || hits[0].Status != "superseded" && hits[1].Status != "superseded" {
		t.Fatalf("--all: %+v", hits)
	}
	if hits := recallJSON(t, dir, "short answers", "--kind", "user", "--json"); len(hits) != 0 {
		t.Fatalf("--kind user returned %+v", hits)
	}
	if hits := recallJSON(t, dir, "short answers", "--kind", "character", "--json"); len(hits) != 1 {
		t.Fatalf("--kind character returned %+v", hits)
	}
	if hits := recallJSON(t, dir, "pixel peanuts berlin", "-k", "1", "--json"); len(hits) != 1 {
		t.Fatalf("-k 1 returned %d hits", len(hits))
	}
	if hits := recallJSON(t, dir, "zebra", "--json"); hits == nil || len(hits) != 0 {
		t.Fatalf("no match should print [], got %+v", hits)
	}

	out, _, code := runMindmount(t, "recall", dir, "how old is pixel")
	if code != 0 || !strings.Contains(out, "user_memory/has-dog-pixel.md\n  Has a beagle called Pixel\n  > Pixel is four years old.") {
		t.Fatalf("human output (exit %d):\n%s", code, out)
	}
	out, _, _ = runMindmount(t, "recall", dir, "Berlin", "--all", "--kind", "user")
	if !strings.Contains(out, "user_memory/lives-in-berlin.md [superseded]") {
		t.Fatalf("retired memory not marked:\n%s", out)
	}
}

func TestRecallCommandErrors(t *testing.T) {
	dir := recallTestRepo(t)
	tests := []struct {
		args []string
		code int
	}{
		{[]string{"recall"}, 2},
		{[]string{"recall", dir}, 2},
		{[]string{"recall", dir, "dog", "--kind", "cat"}, 1},
		{[]string{"recall", dir, "dog", "-k", "0"}, 1},
		{[]string{"recall", filepath.Join(dir, "missing"), "dog"}, 1},
		{[]string{"reindex"}, 2},
		{[]string{"eval", "extra"}, 2},
	}
	for _, tt := range tests {
		if _, _, code := runMindmount(t, tt.args...); code != tt.code {
			t.Errorf("%v: exit %d, want %d", tt.args, code, tt.code)
		}
	}
}

// TestRecallVectorsWithFakeModel runs reindex and recall against the fake
// model server: vectors are built and used when a model is configured, and
// recall keeps answering by keywords when the server is gone.
func TestRecallVectorsWithFakeModel(t *testing.T) {
	dir := recallTestRepo(t)
	srv := llmtest.New(t)
	t.Setenv("MINDMOUNT_LLM", "ollama")
	t.Setenv("OLLAMA_HOST", srv.OllamaURL())
	t.Setenv("MINDMOUNT_EMBED_MODEL", "fake-embed")

	out, errs, code := runMindmount(t, "reindex", dir)
	if code != 0 {
		t.Fatalf("reindex: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "5 memories: 5 embedded now, 0 already cached") {
		t.Fatalf("reindex output: %s", out)
	}
	if strings.Contains(errs, "[") {
		t.Fatalf("progress bar drawn on a non-terminal: %q", errs)
	}
	if _, err := os.Stat(filepath.Join(dir, ".mindmount/cache/vectors/.gitignore")); err != nil {
		t.Fatalf("vector cache not git-ignored: %v", err)
	}
	out, _, _ = runMindmount(t, "reindex", dir)
	if !strings.Contains(out, "0 embedded now, 5 already cached") {
		t.Fatalf("second reindex should embed nothing: %s", out)
	}
	out, errs, code = runMindmount(t, "eval", "--vectors", "-n", "100", "--reps", "1")
	if code != 0 || !strings.Contains(out, "golden set + vectors") || strings.Contains(out, "unavailable") {
		t.Fatalf("eval --vectors: exit %d, %s\n%s", code, errs, out)
	}

	before := len(srv.Embeds())
	hits := recallJSON(t, dir, "beagle", "--json")
	if len(hits) == 0 || hits[0].Path != "user_memory/has-dog-pixel.md" {
		t.Fatalf("with vectors: %+v", hits)
	}
	embeds := srv.Embeds()
	if len(embeds) != before+1 || len(embeds[before]) != 1 || embeds[before][0] != "beagle" {
		t.Fatalf("the query was not embedded: %v", embeds[before:])
	}

	srv.Close()
	hits = recallJSON(t, dir, "allergic", "--json")
	if len(hits) != 1 || hits[0].Path != "user_memory/allergic-to-peanuts.md" {
		t.Fatalf("keyword recall with the model down: %+v", hits)
	}
	if _, _, code := runMindmount(t, "reindex", dir); code != 0 {
		// Nothing to embed: every memory is cached, so no call is needed.
		t.Fatalf("reindex with a full cache and the model down: exit %d", code)
	}
	os.WriteFile(filepath.Join(dir, "user_memory/new.md"), []byte(recallTestMemory("New", "New memory", "Something new.", "active")), 0o644)
	if _, errs, code := runMindmount(t, "reindex", dir); code != 1 || !strings.Contains(errs, "failed") {
		t.Fatalf("reindex with the model down: exit %d, %s", code, errs)
	}
}

func TestProgressLine(t *testing.T) {
	tests := []struct {
		done, total, width int
		want               string
	}{
		{0, 10, 10, "[..........] 0/10 memories   0%"},
		{5, 10, 10, "[#####.....] 5/10 memories  50%"},
		{10, 10, 10, "[##########] 10/10 memories 100%"},
		{12, 10, 10, "[##########] 10/10 memories 100%"},
		{1, 3, 3, "[#..] 1/3 memories  33%"},
		{0, 0, 10, ""},
	}
	for _, tt := range tests {
		if got := progressLine(tt.done, tt.total, tt.width); got != tt.want {
			t.Errorf("progressLine(%d, %d, %d) = %q, want %q", tt.done, tt.total, tt.width, got, tt.want)
		}
	}
}

func TestEvalCommand(t *testing.T) {
	out, errs, code := runMindmount(t, "eval", "-n", "500", "--reps", "1")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s\n%s", code, errs, out)
	}
	for _, want := range []string{"recall@1", "recall@3", "MRR", "retired", "p95"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval output lacks %q:\n%s", want, out)
		}
	}

	// A golden set whose question cannot be answered misses the goals.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "user_memory"), 0o755)
	os.MkdirAll(filepath.Join(dir, "character_memory"), 0o755)
	os.WriteFile(filepath.Join(dir, "user_memory/dog.md"), []byte(recallTestMemory("Dog", "Has a dog", "You have a dog.", "active")), 0o644)
	os.WriteFile(filepath.Join(dir, "questions.tsv"), []byte("what about cats?\tuser_memory/dog.md\n"), 0o644)
	out, errs, code = runMindmount(t, "eval", "--golden", dir, "-n", "100", "--reps", "1")
	if code != 1 || !strings.Contains(errs, "recall@1") {
		t.Fatalf("eval on a failing set: exit %d, stderr %q\n%s", code, errs, out)
	}
}
