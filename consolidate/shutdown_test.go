package consolidate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// within fails the test when fn has not returned after a generous bound. It
// guards against a hang (a deadlock fails the test instead of the suite's
// timeout); it is not a timing assertion.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { fn(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return: deadlock", what)
	}
}

// TestLoopStopsDuringHangingRun is issue 14 defect 1: a run cancelled while
// the model never answers used to return with c.mu held, so Loop (and every
// Status read) blocked forever and SIGTERM never finished.
func TestLoopStopsDuringHangingRun(t *testing.T) {
	both(t, func(t *testing.T, provider string) {
		e := newEnv(t, provider, nil)
		e.cfg.Idle, e.cfg.Every, e.cfg.Now = time.Hour, 1000, time.Now
		e.restart()
		e.srv.Handle(func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Hang: true} })
		e.addTranscript("transcripts/s.jsonl", jsonl("I moved to Lisbon."))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { e.c.Loop(ctx); close(done) }()
		e.c.Request()
		waitFor(t, "the run to reach the model", func() bool {
			return len(e.srv.CallsOf(llmtest.KindExtract)) > 0 && strings.Contains(e.c.Status(), "running")
		})
		cancel()
		within(t, "Loop after cancel", func() { <-done })
		within(t, "Status after cancel", func() {
			if st := e.c.Status(); strings.Contains(st, "running") || strings.Contains(st, "failed") {
				t.Errorf("status after a cancelled run: %q", st)
			}
		})
		within(t, "Pending after cancel", func() { e.c.Pending() })
		if e.exists(CursorFile) {
			t.Fatal("a cancelled run moved the cursor")
		}
		// Nothing was retried after the cancel: one extraction call only.
		if n := len(e.srv.CallsOf(llmtest.KindExtract)); n != 1 {
			t.Fatalf("%d extraction calls; a cancelled loop kept running", n)
		}
	})
}
