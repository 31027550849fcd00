package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestEvalConsolidationSkills: "mindmount eval" prints the golden skill
// cases and passes them with the scripted model.
func TestEvalConsolidationSkills(t *testing.T) {
	var b bytes.Buffer
	ok, why, err := evalConsolidation(t.Context(), &b)
	if err != nil || !ok || len(why) > 0 {
		t.Fatalf("ok %v why %v err %v\n%s", ok, why, err, b.String())
	}
	for _, want := range []string{"skills (scripted model): 3 cases", "ok   a correction updates the skill"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}
