package consolidate

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/tracker"
)

// TestWatchModeEndToEnd wires the consolidator to the change tracker the
// way "mindmount watch" does (no FUSE): a transcript dropped into
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
		return e.exists(".mindmount/status") && strings.Contains(e.read(".mindmount/status"), "consolidation: idle") &&
			strings.Contains(e.read(".mindmount/status"), "1 added")
	})
	log := e.git("log", "--format=%an|%s")
	if n := strings.Count(log, "consolidator|consolidate transcripts/s1.jsonl#1-2"); n != 1 {
		t.Fatalf("%d consolidation commits:\n%s", n, log)
	}
	e.git("fsck", "--strict")
}

// TestWatchModeControlFile: writing .mindmount/consolidate runs at once,
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

// watch runs a tracker over e's repository wired as "mindmount watch" does.
func watch(t *testing.T, e *env) *tracker.Tracker {
	tr := tracker.New(e.g, e.r, tracker.Config{Debounce: 20 * time.Millisecond, MaxWait: time.Second, WriteSynthesized: true, Logger: quietLogger()})
	e.cfg.OnStatus = tr.StatusChanged
	e.c = New(tr, e.p, e.cfg) // the tracker is its writer
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

// TestWatchModeRequestAfterRevert: a request written through the control
// file right after a "git revert" of a consolidation, while the tracker
// reloads the moved HEAD, runs: the new transcript is consolidated, and the
// reverted messages stay consumed (the cursor floor).
func TestWatchModeRequestAfterRevert(t *testing.T) {
	e := loopEnv(t, time.Hour, 1000)
	tr := watch(t, e)
	fact := func(slug string) []Fact {
		return []Fact{{Kind: "user", Slug: slug, Description: "Fact " + slug, Fact: "You " + slug + "."}}
	}
	e.script(fact("keeps-bees"), []Decision{{Fact: 0, Action: ActionAdd}})
	e.write("transcripts/s0.jsonl", jsonl("I keep two beehives in my garden.", "How lovely!"))
	e.write(tracker.ControlFile, "")
	waitFor(t, "the first run", func() bool { return e.exists("user_memory/keeps-bees.md") && e.commits() == 2 })
	for round := 1; round <= 5; round++ {
		before := e.commits()
		slug := fmt.Sprintf("round-%d", round)
		src := fmt.Sprintf("transcripts/s%d.jsonl", round)
		e.script(fact(slug), []Decision{{Fact: 0, Action: ActionAdd}})
		e.write(src, jsonl("Round "+slug+".", "Noted."))
		// The last run is over and committed: the revert races nothing
		// of ours (a revert racing a commit is the tracker's business).
		waitFor(t, "the idle consolidator", func() bool { return strings.Contains(e.c.Status(), "consolidation: idle") })
		if err := tr.Settle(context.Background()); err != nil {
			t.Fatal(err)
		}
		revertHead(t, e.dir)
		e.write(tracker.ControlFile, "")
		deadline := time.Now().Add(10 * time.Second)
		for !e.exists("user_memory/" + slug + ".md") {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the request after the revert was lost: status %q\n%s", round, e.c.Status(), e.git("log", "--format=%an|%s"))
			}
			time.Sleep(5 * time.Millisecond)
		}
		waitFor(t, "the consolidation commit", func() bool { return e.commits() == before+2 })
		if s := e.lastSubject(); !strings.HasPrefix(s, "consolidate "+src+"#1-2") {
			t.Fatalf("round %d: last commit %q", round, s)
		}
	}
	if e.exists("user_memory/keeps-bees.md") {
		t.Errorf("a reverted consolidation came back")
	}
	e.git("fsck", "--strict")
}

// revertHead runs "git revert HEAD" in dir, again while the index is locked
// by a commit finishing beside it (as a person would run it again).
func revertHead(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := exec.Command("git", "-C", dir, "-c", "user.name=t", "-c", "user.email=t@x", "revert", "--no-edit", "HEAD").CombinedOutput()
		if err == nil {
			return
		}
		if !strings.Contains(string(out), "index.lock") || time.Now().After(deadline) {
			t.Fatalf("git revert HEAD: %v\n%s", err, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
