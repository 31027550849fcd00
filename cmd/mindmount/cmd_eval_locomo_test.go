package main

import (
	"path/filepath"
	"regexp"
	"testing"
)

// TestEvalLocomo runs "mindmount eval locomo" on a conversation written in
// the benchmark's shape (the benchmark's data is not redistributable): a
// row per category and overall, a missing file skipped with exit 0.
func TestEvalLocomo(t *testing.T) {
	fixture := filepath.Join("..", "..", "memgraph", "recall", "golden", "testdata", "locomo-synthetic.json")
	out, errs, code := runMindmount(t, "eval", "locomo", fixture, "--k", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	row := regexp.MustCompile(`(?m)^(multi-hop|temporal|open-domain|single-hop|overall)\s+(\d+)(\s+[01]\.\d{3}){5}$`)
	if n := len(row.FindAllString(out, -1)); n != 5 {
		t.Errorf("%d rows of figures, want 5:\n%s", n, out)
	}
	if !regexp.MustCompile(`(?m)^single-hop\s+1\s+1\.000`).MatchString(out) {
		t.Errorf("the single-hop question's turn is not first:\n%s", out)
	}
	out, _, code = runMindmount(t, "eval", "locomo", filepath.Join(t.TempDir(), "absent.json"))
	if code != 0 || !regexp.MustCompile(`does not exist; skipped`).MatchString(out) {
		t.Errorf("absent file: exit %d, %q", code, out)
	}
	if _, _, code := runMindmount(t, "eval", "locomo", fixture, "--k", "0"); code != 2 {
		t.Errorf("--k 0: exit %d, want 2", code)
	}
	if _, _, code := runMindmount(t, "eval", "locomo", fixture, "--vectors", "--fake-vectors"); code != 2 {
		t.Errorf("--vectors --fake-vectors: exit %d, want 2", code)
	}
	out, errs, code = runMindmount(t, "eval", "locomo", fixture, "--fake-vectors")
	if code != 0 || !regexp.MustCompile(`keyword\+vector ranking`).MatchString(out) {
		t.Errorf("--fake-vectors: exit %d, %s\n%s", code, errs, out)
	}
}
