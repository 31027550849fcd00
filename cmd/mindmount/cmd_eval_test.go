package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestEvalFakeVectors (issue 27): --fake-vectors evaluates embedding
// recall offline, with no model configured, beside keyword recall; the
// README's eval table quotes this run.
func TestEvalFakeVectors(t *testing.T) {
	t.Setenv("MINDMOUNT_LLM", "")
	t.Setenv("OLLAMA_HOST", "http://127.0.0.1:1") // nothing answers: the fake needs no model
	out, errs, code := runMindmount(t, "eval", "--fake-vectors", "-n", "100", "--reps", "1")
	if code != 0 {
		t.Fatalf("eval --fake-vectors: exit %d: %s\n%s", code, errs, out)
	}
	row := regexp.MustCompile(`(?m)^(golden set|golden set \+ vectors)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+(\d+)$`)
	rows := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(out, -1) {
		rows[m[1]] = m[2:]
	}
	kw, fused := rows["golden set"], rows["golden set + vectors"]
	if kw == nil || fused == nil {
		t.Fatalf("eval output lacks the keyword or the fused row:\n%s", out)
	}
	if fused[3] != "0" {
		t.Errorf("fused recall returned %s retired memories", fused[3])
	}
	if strings.Join(kw[:3], " ") == strings.Join(fused[:3], " ") {
		t.Errorf("the fused row equals the keyword row (%v): the vectors were not used\n%s", kw, out)
	}
	if _, _, code := runMindmount(t, "eval", "--fake-vectors", "--vectors"); code != 2 {
		t.Errorf("--fake-vectors with --vectors: exit %d, want 2", code)
	}
}
