package consolidate

import (
	"context"
	"strings"
	"testing"
	"time"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startLoop runs e.c.Loop until the test ends.
func startLoop(t *testing.T, e *env) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.c.Loop(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func loopEnv(t *testing.T, idle time.Duration, every int) *env {
	e := newEnv(t, "ollama", nil)
	e.cfg.Idle, e.cfg.Every, e.cfg.Now = idle, every, time.Now
	e.cfg.MinBackoff = time.Hour
	e.restart()
	return e
}

func (e *env) lastSubject() string { return strings.TrimSpace(e.git("log", "-1", "--format=%s")) }

func TestLoopIdleTrigger(t *testing.T) {
	e := loopEnv(t, 30*time.Millisecond, 1000)
	e.script([]Fact{{Kind: "user", Slug: "plays-chess", Description: "Plays chess", Fact: "You play chess."}}, []Decision{{Fact: 0, Action: ActionAdd}})
	startLoop(t, e)
	e.addTranscript("transcripts/s.jsonl", jsonl("I play chess every Sunday."))
	e.c.Notify("transcripts/s.jsonl")
	waitFor(t, "the idle run", func() bool { return strings.HasPrefix(e.lastSubject(), "consolidate transcripts/s.jsonl#1") })
	if !e.exists("user_memory/plays-chess.md") {
		t.Fatal("memory missing")
	}
	// The graph hears of the commit a moment after it is made.
	waitFor(t, "the index", func() bool { return strings.Contains(string(e.g.Index("user")), "plays-chess") })
	waitFor(t, "the status", func() bool { return strings.Contains(e.c.Status(), "1 added") })
}

func TestLoopCountTrigger(t *testing.T) {
	e := loopEnv(t, time.Hour, 2)
	startLoop(t, e)
	e.addTranscript("transcripts/s.jsonl", jsonl("one", "ok", "two"))
	e.c.Notify("transcripts/s.jsonl")
	waitFor(t, "the count run", func() bool { return strings.HasPrefix(e.lastSubject(), "consolidate transcripts/s.jsonl#1-3") })
}

func TestLoopRequestAndStatus(t *testing.T) {
	e := loopEnv(t, time.Hour, 1000)
	e.addTranscript("transcripts/s.jsonl", jsonl("I am left-handed."))
	url := e.srv.OllamaURL()
	e.srv.Close()
	startLoop(t, e)
	waitFor(t, "waiting status", func() bool { return strings.Contains(e.c.Status(), "waiting for a model at "+url) })
	if !strings.Contains(e.c.Status(), "1 new user messages pending") {
		t.Fatalf("status %q", e.c.Status())
	}
	e.c.Request()
	waitFor(t, "the failed run", func() bool { return strings.Contains(e.c.Status(), "failed") })
	if st := e.c.Status(); !strings.Contains(st, "waiting for a model") || !strings.Contains(st, "next try in 1h0m0s") {
		t.Fatalf("status %q", st)
	}
	if e.exists(CursorFile) {
		t.Fatal("a failed run moved the cursor")
	}
}

func TestDue(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		pending   int
		sinceLast time.Duration
		failures  int
		nextTry   time.Duration // from now
		requested bool
		wantRun   bool
		wantWait  time.Duration
	}{
		{"nothing pending", 0, time.Hour, 0, 0, false, false, 0},
		{"not idle yet", 1, 4 * time.Minute, 0, 0, false, false, 6 * time.Minute},
		{"idle", 1, 10 * time.Minute, 0, 0, false, true, 0},
		{"count reached", 30, 0, 0, 0, false, true, 0},
		{"backing off", 30, time.Hour, 2, 5 * time.Minute, false, false, 5 * time.Minute},
		{"request beats backoff", 30, 0, 2, 5 * time.Minute, true, true, 0},
		{"request with nothing pending", 0, 0, 0, 0, true, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Consolidator{cfg: Config{Now: func() time.Time { return t0 }}, pending: map[string]int{}, dirty: map[string]bool{}}
			c.cfg.defaults()
			if tc.pending > 0 {
				c.pending["transcripts/a"] = tc.pending
			}
			c.lastChange = t0.Add(-tc.sinceLast)
			c.failures, c.nextTry, c.requested = tc.failures, t0.Add(tc.nextTry), tc.requested
			wait, run := c.due()
			if run != tc.wantRun || wait != tc.wantWait {
				t.Fatalf("due() = %v, %v; want %v, %v", wait, run, tc.wantWait, tc.wantRun)
			}
		})
	}
}
