package golden

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
)

// TestPRs plays the pull-request set: every conflict decided as
// expected, no sibling superseded, no superseded memory recalled, and
// recall good enough to comment with.
func TestPRs(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	r, err := RunPRs(context.Background(), t.TempDir(), PROptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	WritePRsText(&b, "scripted model", r, true)
	t.Log("\n" + b.String())
	s := r.Summarize()
	if !s.Pass() {
		t.Errorf("goals missed: %+v", s)
	}
	if s.Facts != 21 || s.Supersedes != 4 || s.Queries != len(PRQueries) {
		t.Errorf("the set changed size: %+v", s)
	}
	if s.RecallAt3 < 0.8 {
		t.Errorf("recall@3 %.3f < 0.8", s.RecallAt3)
	}
}
