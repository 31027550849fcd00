package main

import (
	"strings"
	"testing"
)

// TestEvalConsolidationSection: mindmount eval prints the consolidation
// figures of issue 15 and meets their goals.
func TestEvalConsolidationSection(t *testing.T) {
	out, errs, code := runMindmount(t, "eval", "-n", "100", "--reps", "1")
	if code != 0 {
		t.Fatalf("eval: exit %d: %s\n%s", code, errs, out)
	}
	for _, want := range []string{
		"consolidation (scripted model, with topics): 5 contradiction scenarios, 1 converse",
		"candidates holding the memory to retire: 5/5 (goal: all)",
		"contradictory memories left active:      0 (goal: none)",
		"for comparison, without topics: 1/5 offered, 5 left active",
		"skills (scripted model): 3 cases",
		"ok   a correction updates the skill",
		"pull requests (scripted model, the recall comment's query and threshold): 15 pull requests and issues, 21 facts (4 supersede cases), 12 new pull requests",
		"staleness rate 0.000",
		"conflict detection accuracy 1.000 (21/21",
		"siblings superseded: 0 (goal: 0)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("eval output lacks %q:\n%s", want, out)
		}
	}
}
