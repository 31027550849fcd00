package consolidate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram/memgraph/tracker"
)

// TestWatchModeEndToEnd wires the consolidator to the change tracker the
// way "engram watch" does (no FUSE): a transcript dropped into
// transcripts/ is committed by the tracker, the writer goes idle, the
// memory appears in the synthesized user_memory.md, in exactly one
// consolidation commit; then the control file asks for another run.
func TestWatchModeEndToEnd(t *testing.T) {
	e := loopEnv(t, 50*time.Millisecond, 1000)
	watch(t, e)
	e.script([]Fact{{Kind: "user", Slug: "keeps-bees", Description: "Keeps bees in the garden", Fact: "You keep two beehives in your garden."}},
		[]Decision{{Fact: 0, Action: ActionAdd}})
	e.write("transcripts/s1.jsonl", jsonl("I keep two beehives in my garden.", "How lovely!"))
	waitFor(t, "the memory in user_memory.md", func() bool {
		return e.exists("user_memory.md") && strings.Contains(e.read("user_memory.md"), "user_memory/keeps-bees.md")
	})
	waitFor(t, "the status line", func() bool {
		return e.exists(".engram/status") && strings.Contains(e.read(".engram/status"), "consolidation: idle") &&
			strings.Contains(e.read(".engram/status"), "1 added")
	})
	log := e.git("log", "--format=%an|%s")
	if n := strings.Count(log, "consolidator|consolidate transcripts/s1.jsonl#1-2"); n != 1 {
		t.Fatalf("%d consolidation commits:\n%s", n, log)
	}
	e.git("fsck", "--strict")
}

// TestWatchModeControlFile: writing .engram/consolidate runs at once,
// although neither the idle time nor the message count is reached.
func TestWatchModeControlFile(t *testing.T) {
	e := loopEnv(t, time.Hour, 1000)
	tr := watch(t, e)
	e.write("transcripts/s2.md", "User: I also keep chickens.\n")
	if err := tr.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pending count", func() bool { return strings.Contains(e.c.Status(), "1 new user messages pending") })
	e.script(nil, nil)
	e.write(tracker.ControlFile, "")
	waitFor(t, "the requested run", func() bool {
		return strings.Contains(e.git("log", "--format=%s"), "consolidate transcripts/s2.md#1")
	})
}

// watch runs a tracker over e's repository wired as "engram watch" does.
func watch(t *testing.T, e *env) *tracker.Tracker {
	tr := tracker.New(e.g, e.r, tracker.Config{Debounce: 20 * time.Millisecond, MaxWait: time.Second, WriteSynthesized: true, Logger: quietLogger()})
	e.cfg.OnStatus = tr.StatusChanged
	e.c = New(e.g, e.r, e.p, e.cfg) // same graph and repository as the tracker
	tr.SetExtraStatus(e.c.Status)
	tr.Subscribe(func(paths []string) {
		for _, p := range paths {
			e.c.Notify(p)
		}
	})
	tr.OnControl(e.c.Request)
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- tr.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-runDone })
	select {
	case <-tr.Ready():
	case err := <-runDone:
		t.Fatal(err)
	}
	startLoop(t, e)
	return tr
}
