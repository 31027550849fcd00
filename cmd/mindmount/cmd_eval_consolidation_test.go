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
	} {
		if !strings.Contains(out, want) {
			t.Errorf("eval output lacks %q:\n%s", want, out)
		}
	}
}
