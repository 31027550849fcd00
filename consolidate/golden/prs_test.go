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

// TestPRDecide: the scripted decision retires the first same-topic
// candidate of the same kind, whether or not it is a sibling, and adds
// otherwise.
func TestPRDecide(t *testing.T) {
	prompt := `<fact number="0" kind="user">
description: Decision: sessions in Redis
topic: session-store
tags: decision
candidates:
- path: user_memory/redis-ttl
  offered because: search match
  tags: decision
- path: user_memory/session-gotcha
  offered because: same topic session-store
  tags: gotcha
- path: user_memory/sessions-in-memory
  offered because: same topic session-store, search match
  same source: a sibling of these facts
  tags: decision
</fact>

<fact number="1" kind="user">
description: Gotcha: TTL
tags: gotcha
candidates:
- path: user_memory/session-gotcha
  offered because: search match
  tags: gotcha
</fact>
`
	got := PRDecide(prompt)
	if len(got) != 2 || got[0].Action != "DELETE" || got[0].Target != "user_memory/sessions-in-memory" || got[1].Action != "ADD" {
		t.Fatalf("decisions: %+v", got)
	}
}
