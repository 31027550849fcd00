package consolidate

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// TestApproveMergesWhatWasShown: a run (merge: review) has committed its
// dream's first chunk and waits for a slow model on the second. Meanwhile
// review does not list the dream and approve cannot merge it, whatever
// tip it names; once the run ends, the dream is listed with its last tip,
// an approval naming the tip seen mid-run is refused (nothing merged), and
// one naming the listed tip merges exactly that and deletes the branch.
func TestApproveMergesWhatWasShown(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.setMerge("review")
	e.cfg.ChunkChars = 200 // one message per chunk
	e.restart()
	e.addTranscript("transcripts/s1.jsonl", jsonl(
		"I keep two beehives on the roof of my house, and every summer I harvest the honey with my neighbours from down the street.",
		"Bees on a roof sound lovely; a shared harvest with the neighbours must be a good day. Tell me more about the hives, please.",
		"I also fly small planes at the weekend, mostly a Cessna from the little airfield north of the town, when the weather allows."))
	e.script([]Fact{{Kind: "user", Slug: "keeps-bees", Description: "Keeps bees", Fact: "You keep two beehives."}},
		[]Decision{{Fact: 0, Action: ActionAdd}})
	gate := make(chan struct{})
	var opened sync.Once
	open := func() { opened.Do(func() { close(gate) }) }
	t.Cleanup(open) // before the server closes: a failed test must not hang its handler
	e.srv.Handle(func(c llmtest.Call) llmtest.Reply {
		<-gate // the slow model: chunks after the first wait here
		switch {
		case c.Kind == llmtest.KindExtract && strings.Contains(c.Prompt, "planes"):
			return llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []Fact{{Kind: "user", Slug: "flies-planes", Description: "Flies planes", Fact: "You fly small planes."}}})}
		case c.Kind == llmtest.KindDecide:
			return llmtest.Reply{Content: llmtest.JSON(map[string]any{"decisions": []Decision{{Fact: 0, Action: ActionAdd}}})}
		}
		return llmtest.Reply{Content: `{"facts":[]}`}
	})
	head := e.git("rev-parse", "HEAD")
	done := make(chan error, 1)
	go func() { _, err := e.c.Run(context.Background()); done <- err }()
	var midTip string
	waitFor(t, "the first chunk on the dream's branch and the model asked for the next", func() bool {
		b, _ := e.r.Branches(DreamPrefix)
		midTip = b["mindmount/dream/1"]
		return midTip != "" && len(e.srv.CallsOf(llmtest.KindExtract)) >= 2
	})
	// While the run holds the dream: not listed, not approvable.
	if ds, err := e.c.Dreams(); err != nil || len(ds) != 0 {
		t.Fatalf("a dream still being written is listed: %v %v", ds, err)
	}
	if _, err := e.c.Approve(context.Background(), 1, midTip); !errors.Is(err, ErrNoDream) {
		t.Fatalf("approve of a dream still being written: %v, want ErrNoDream", err)
	}
	if e.git("rev-parse", "HEAD") != head {
		t.Fatal("something was merged while the run held the dream")
	}
	open()
	within(t, "the run", func() {
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	ds, err := e.c.Dreams()
	if err != nil || len(ds) != 1 || ds[0].Tip == midTip {
		t.Fatalf("after the run: %v %v, want dream 1 at a tip past %s", ds, err, midTip)
	}
	if a, _, _ := ds[0].Counts(); a != 2 {
		t.Fatalf("dream 1 adds %d memories, want 2", a)
	}
	// The tip seen mid-run is stale: refused, nothing merged.
	if _, err := e.c.Approve(context.Background(), 1, midTip); !errors.Is(err, ErrDreamMoved) {
		t.Fatalf("approve with a stale tip: %v, want ErrDreamMoved", err)
	}
	if _, err := e.c.Approve(context.Background(), 1, ""); !errors.Is(err, ErrNoTip) {
		t.Fatalf("approve without a tip: %v, want ErrNoTip", err)
	}
	if e.git("rev-parse", "HEAD") != head || e.exists("user_memory/keeps-bees.md") {
		t.Fatal("a refused approval merged something")
	}
	merge, err := e.c.Approve(context.Background(), 1, ds[0].Tip[:12])
	if err != nil {
		t.Fatal(err)
	}
	if ps := strings.Fields(e.git("log", "-1", "--format=%P", merge)); len(ps) != 2 || ps[1] != ds[0].Tip {
		t.Fatalf("the merge's parents %v, want the shown tip %s second", ps, ds[0].Tip)
	}
	if !e.exists("user_memory/keeps-bees.md") || !e.exists("user_memory/flies-planes.md") {
		t.Fatal("the approved memories are not in main")
	}
	if b, _ := e.r.Branches(DreamPrefix); len(b) != 0 {
		t.Fatalf("the approved dream's branch stays: %v", b)
	}
	if c := e.cursor(); c.Dreams < 1 {
		t.Fatalf("the merged cursor does not record dream 1 as given: %+v", c)
	}
	// The number is not given again, and nothing is proposed again.
	e.restart()
	if rep := e.run(); len(rep.Sources) != 0 {
		t.Fatalf("approved transcripts proposed again: %+v", rep)
	}
	e.addTranscript("transcripts/s2.jsonl", jsonl("I speak Italian."))
	e.srv.Handle(nil)
	e.script([]Fact{{Kind: "user", Slug: "speaks-italian", Description: "Speaks Italian", Fact: "You speak Italian."}}, []Decision{{Fact: 0, Action: ActionAdd}})
	if rep := e.run(); len(rep.Pending) != 1 || rep.Pending[0] != "mindmount/dream/2" {
		t.Fatalf("the next dream: %+v, want mindmount/dream/2", rep)
	}
}

// TestApproveRefusesATipNotOfTheRun: a commit that is not the run's (no
// Mindmount-Dream trailer: someone with the repository appended it to the
// dream's branch) leaves the dream listed with nothing to show. Approving
// that tip is refused: nothing is merged, the branch and its run's
// commits stay, and no "merged" is reported for a merge that never was.
func TestApproveRefusesATipNotOfTheRun(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.setMerge("review")
	e.restart()
	e.addTranscript("transcripts/s1.jsonl", jsonl("I keep two beehives on the roof of my house."))
	e.script([]Fact{{Kind: "user", Slug: "keeps-bees", Description: "Keeps bees", Fact: "You keep two beehives."}},
		[]Decision{{Fact: 0, Action: ActionAdd}})
	e.run()
	b, _ := e.r.Branches(DreamPrefix)
	tip := b["mindmount/dream/1"]
	if tip == "" {
		t.Fatalf("no dream after the run: %v", b)
	}
	head := e.git("rev-parse", "HEAD")
	other := strings.TrimSpace(e.git("commit-tree", tip+"^{tree}", "-p", tip, "-m", "one more"))
	e.git("update-ref", "refs/heads/mindmount/dream/1", other, tip)
	hash, err := e.c.Approve(context.Background(), 1, other)
	if !errors.Is(err, ErrDreamMoved) {
		t.Fatalf("approve of a tip no run wrote: %q, %v; want ErrDreamMoved", hash, err)
	}
	if e.git("rev-parse", "HEAD") != head || e.exists("user_memory/keeps-bees.md") {
		t.Fatal("a refused approval changed the live branch")
	}
	if b, _ := e.r.Branches(DreamPrefix); b["mindmount/dream/1"] != other {
		t.Fatalf("the dream's branch was deleted or moved: %v", b)
	}
}
