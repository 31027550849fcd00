package consolidate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// setMerge writes the operator's merge setting of the test repository.
func (e *env) setMerge(mode string) {
	e.t.Helper()
	p := filepath.Join(e.r.GitDir(), filepath.FromSlash(memgraph.OperatorFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("merge: "+mode+"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// dream starts a dream at HEAD, for tests of a chunk's parts.
func (e *env) dream() *dream {
	e.t.Helper()
	d, err := e.c.newDream(0)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

// TestDreamIsABranchAndAMerge: a run commits its proposal on
// refs/heads/mindmount/dream/1 (with the provenance trailers), then merges
// it into main with a real two-parent merge commit whose subject is the
// run's and names the dream; git log --graph shows the branch and the merge.
func TestDreamIsABranchAndAMerge(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	base := strings.TrimSpace(e.git("rev-parse", "HEAD"))
	e.addTranscript("transcripts/s.jsonl", jsonl("I keep two beehives."))
	e.script([]Fact{{Kind: "user", Slug: "keeps-bees", Description: "Keeps bees", Fact: "You keep two beehives."}}, []Decision{{Fact: 0, Action: ActionAdd}})
	rep := e.run()
	if len(rep.Commits) != 1 || len(rep.Merges) != 1 || rep.Added != 1 {
		t.Fatalf("report %+v", rep)
	}
	tip := strings.TrimSpace(e.git("rev-parse", "refs/heads/mindmount/dream/1"))
	if tip != rep.Commits[0] {
		t.Fatalf("dream branch at %s, the run's commit is %s", tip, rep.Commits[0])
	}
	if p := strings.TrimSpace(e.git("log", "-1", "--format=%P", tip)); p != base {
		t.Fatalf("the dream does not start at the pinned base: parent %s, base %s", p, base)
	}
	dmsg := e.git("log", "-1", "--format=%B", tip)
	for _, tr := range []string{"Mindmount-Model: ollama/fake-model", "Mindmount-Source: transcripts/s.jsonl#1", "Mindmount-Transcript: ", "Mindmount-Dream: mindmount/dream/1"} {
		if !strings.Contains(dmsg, tr) {
			t.Errorf("the dream's commit lacks %q:\n%s", tr, dmsg)
		}
	}
	if ps := strings.Fields(e.git("log", "-1", "--format=%P")); len(ps) != 2 || ps[0] != base || ps[1] != tip {
		t.Fatalf("HEAD's parents %v, want [%s %s]", ps, base, tip)
	}
	if s := e.lastSubject(); s != "consolidate transcripts/s.jsonl#1: 1 added, 0 updated, 0 contradicted, 0 unchanged (merge of dream 1)" {
		t.Fatalf("merge subject %q", s)
	}
	if graph := e.git("log", "--graph", "--oneline"); !strings.Contains(graph, "|\\") && !strings.Contains(graph, "|/") {
		t.Fatalf("git log --graph shows no branch:\n%s", graph)
	}
	if !e.exists("user_memory/keeps-bees.md") || e.cursor().Transcripts["transcripts/s.jsonl"].Messages != 1 {
		t.Fatal("the merge did not bring the memory and the cursor")
	}
	if e.g.Get("user_memory/keeps-bees.md") == nil {
		t.Fatal("the graph did not hear of the merge")
	}
	e.checkGit()
}

// TestDreamRevertStaysUndone: "git revert -m 1 <merge>" undoes a whole
// dream, and the next run does not bring it back (the cursor floor holds
// through the merge's second parent).
func TestDreamRevertStaysUndone(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.addTranscript("transcripts/s.jsonl", jsonl("I keep two beehives.", "Lovely.", "And I speak Welsh."))
	e.script([]Fact{
		{Kind: "user", Slug: "keeps-bees", Description: "Keeps bees", Fact: "You keep two beehives."},
		{Kind: "user", Slug: "speaks-welsh", Description: "Speaks Welsh", Fact: "You speak Welsh."},
	}, []Decision{{Fact: 0, Action: ActionAdd}, {Fact: 1, Action: ActionAdd}})
	rep := e.run()
	e.git("-c", "user.name=t", "-c", "user.email=t@x", "revert", "--no-edit", "-m", "1", rep.Merges[0])
	if e.exists("user_memory/keeps-bees.md") || e.exists("user_memory/speaks-welsh.md") {
		t.Fatal("the revert did not undo the dream")
	}
	e.restart()
	e.script([]Fact{{Kind: "user", Slug: "keeps-bees", Description: "Keeps bees", Fact: "You keep two beehives."}}, []Decision{{Fact: 0, Action: ActionAdd}})
	rep = e.run()
	if len(rep.Sources) != 0 || e.exists("user_memory/keeps-bees.md") || len(e.srv.CallsOf(llmtest.KindExtract)) != 1 {
		t.Fatalf("the reverted dream came back: %+v", rep)
	}
}

// TestReviewMode: with merge: review the dream waits: main is unchanged,
// review lists it with its facts and shows its diff, a second run does not
// propose the same messages again; approve merges it (a merge commit);
// reject drops another for good (a small commit records why; no memory
// changes; the transcripts are not proposed again).
func TestReviewMode(t *testing.T) {
	e := newEnv(t, "ollama", map[string]string{"user_memory/lives-in-porto.md": memoryFile("Lives in Porto", "Lives In Porto", "You live in Porto.")})
	e.setMerge("review")
	e.restart()
	head := e.git("rev-parse", "HEAD")
	e.addTranscript("transcripts/s1.jsonl", jsonl("I moved to Lisbon."))
	e.script([]Fact{{Kind: "user", Slug: "lives-in-lisbon", Description: "Lives in Lisbon", Fact: "You live in Lisbon.", Topic: "home-city"}},
		[]Decision{{Fact: 0, Action: ActionDelete, Target: "user_memory/lives-in-porto"}})
	rep := e.run()
	if len(rep.Pending) != 1 || rep.Pending[0] != "mindmount/dream/1" || len(rep.Merges) != 0 || !strings.Contains(rep.String(), "waits for review") {
		t.Fatalf("report %+v", rep)
	}
	if e.git("rev-parse", "HEAD") != head || e.exists("user_memory/lives-in-lisbon.md") {
		t.Fatal("a dream under review changed main")
	}
	ds, err := e.c.Dreams()
	if err != nil || len(ds) != 1 {
		t.Fatalf("dreams %v %v", ds, err)
	}
	if a, u, x := ds[0].Counts(); a != 1 || u != 0 || x != 1 || ds[0].Sources[0] != "transcripts/s1.jsonl#1" {
		t.Fatalf("summary %+v", ds[0])
	}
	var facts []string
	for _, ch := range ds[0].Changes {
		facts = append(facts, ch.Kind+" "+ch.Fact)
	}
	if got := strings.Join(facts, "; "); !strings.Contains(got, "added You live in Lisbon.") || !strings.Contains(got, "contradicted You live in Porto.") {
		t.Fatalf("changes %q", got)
	}
	diff, err := e.c.DreamDiff(1)
	if err != nil || !strings.Contains(diff, "+You live in Lisbon.") || !strings.Contains(diff, "+status: contradicted") {
		t.Fatalf("diff %v:\n%s", err, diff)
	}
	// Nothing new: a second run proposes nothing (the dream's cursor counts).
	rep = e.run()
	if len(rep.Sources) != 0 || len(e.srv.CallsOf(llmtest.KindExtract)) != 1 {
		t.Fatalf("a waiting dream's messages were proposed again: %+v", rep)
	}
	merge, err := e.c.Approve(context.Background(), 1, e.tip(1))
	if err != nil {
		t.Fatal(err)
	}
	if ps := strings.Fields(e.git("log", "-1", "--format=%P")); len(ps) != 2 || strings.TrimSpace(e.git("rev-parse", "HEAD")) != merge {
		t.Fatalf("approve made no merge: %v", ps)
	}
	if !e.exists("user_memory/lives-in-lisbon.md") || e.mem("user_memory/lives-in-porto.md").Active() {
		t.Fatal("the approved dream is not in main")
	}
	if !strings.Contains(e.git("log", "-1", "--format=%B"), "Mindmount-Approved: mindmount/dream/1") {
		t.Fatal("the merge does not say it was approved")
	}
	if ds, _ := e.c.Dreams(); len(ds) != 0 {
		t.Fatalf("an approved dream still waits: %v", ds)
	}
	if got := e.git("branch", "--list", "mindmount/dream/*"); strings.TrimSpace(got) != "" {
		t.Fatalf("the approved dream's branch stays: %q", got)
	}
	if _, err := e.c.Approve(context.Background(), 1, ds[0].Tip); !errors.Is(err, ErrNoDream) {
		t.Fatalf("approved twice: %v", err)
	}

	// Reject.
	e.addTranscript("transcripts/s2.jsonl", jsonl("I am a pilot."))
	e.script([]Fact{{Kind: "user", Slug: "is-a-pilot", Description: "Is a pilot", Fact: "You are a pilot."}}, []Decision{{Fact: 0, Action: ActionAdd}})
	e.run()
	before := e.git("ls-tree", "-r", "HEAD", "user_memory")
	rej, err := e.c.Reject(context.Background(), 2, "a joke, not a job")
	if err != nil {
		t.Fatal(err)
	}
	msg := e.git("log", "-1", "--format=%B", rej)
	if !strings.Contains(msg, "Mindmount-Rejected: mindmount/dream/2") || !strings.Contains(msg, "Mindmount-Reason: a joke, not a job") {
		t.Fatalf("rejection commit:\n%s", msg)
	}
	if e.git("ls-tree", "-r", "HEAD", "user_memory") != before || e.exists("user_memory/is-a-pilot.md") {
		t.Fatal("a rejection changed memories")
	}
	if ds, _ := e.c.Dreams(); len(ds) != 0 {
		t.Fatalf("a rejected dream still waits: %v", ds)
	}
	// The rejected branch is gone (git says so), as the approved one is
	// (its commits stay as the merge's second parent).
	if got := strings.TrimSpace(e.git("branch", "-a", "--list", "mindmount/*", "--format=%(refname:short)")); got != "" {
		t.Fatalf("branches after the rejection: %q, want none", got)
	}
	e.restart()
	rep = e.run()
	if len(rep.Sources) != 0 {
		t.Fatalf("rejected transcripts were proposed again: %+v", rep)
	}
	// The next dream does not take the rejected one's number: a repeated
	// "review reject 2" must not drop it.
	e.addTranscript("transcripts/s3.jsonl", jsonl("I grow tomatoes."))
	e.script([]Fact{{Kind: "user", Slug: "grows-tomatoes", Description: "Grows tomatoes", Fact: "You grow tomatoes."}}, []Decision{{Fact: 0, Action: ActionAdd}})
	if rep = e.run(); len(rep.Pending) != 1 || rep.Pending[0] != "mindmount/dream/3" {
		t.Fatalf("the dream after a rejection: %+v, want mindmount/dream/3", rep)
	}
	if _, err := e.c.Reject(context.Background(), 2, ""); !errors.Is(err, ErrNoDream) {
		t.Fatalf("rejecting dream 2 again: %v, want ErrNoDream", err)
	}
	e.checkGit()
}

// TestWritesDuringASlowDream: the agent writes 50 memories while a dream
// waits for the model, which answers only once all 50 are written. None
// of the writes waits for the dream (a write that did would wait for
// ever: the model holds its answer until the writes are done);
// afterwards main holds all 50 and the dream's memory, joined by exactly
// one merge commit.
func TestWritesDuringASlowDream(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	tr := tracker.New(e.g, e.r, tracker.Config{Logger: quietLogger()})
	e.c = New(tr, e.p, e.cfg)
	e.addTranscript("transcripts/s.jsonl", jsonl("I keep two beehives."))
	answered, release := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })
	e.srv.Queue(llmtest.KindExtract, llmtest.Reply{Until: release,
		Content: llmtest.JSON(map[string]any{"facts": []Fact{{Kind: "user", Slug: "keeps-bees", Description: "Keeps bees", Fact: "You keep two beehives."}}})})
	e.srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: llmtest.JSON(map[string]any{"decisions": []Decision{{Fact: 0, Action: ActionAdd}}})})
	var wg sync.WaitGroup
	var rep Report
	var runErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(answered)
		rep, runErr = e.c.Run(context.Background())
	}()
	// The dream is under way: it asked the model.
	for deadline := time.Now().Add(time.Minute); len(e.srv.CallsOf(llmtest.KindExtract)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the dream never asked the model")
		}
	}
	written := make(chan error, 1)
	go func() {
		for i := range 50 {
			rel := fmt.Sprintf("user_memory/note-%02d.md", i)
			if _, err := tr.Apply(context.Background(), tracker.Change{Changes: []gitrepo.Change{{Path: rel, Data: []byte(memoryFile(fmt.Sprintf("Note %d", i), "Note", "Note."))}},
				Message: "agent: " + rel, Author: gitrepo.Writer("agent"), Worktree: true}); err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}()
	// The deadline only stops a hang: a write blocked by the dream would
	// never return, since the model answers after the writes.
	select {
	case err := <-written:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the writes did not return while the dream waited for the model: they wait for the dream")
	}
	select {
	case <-answered:
		t.Fatal("the dream ended before the model answered")
	default:
	}
	releaseOnce.Do(func() { close(release) })
	wg.Wait()
	if runErr != nil || len(rep.Merges) != 1 {
		t.Fatalf("run: %+v %v", rep, runErr)
	}
	files := e.git("ls-tree", "-r", "--name-only", "HEAD", "user_memory")
	if n := strings.Count(files, "user_memory/note-"); n != 50 || !strings.Contains(files, "user_memory/keeps-bees.md") {
		t.Fatalf("main holds %d notes:\n%s", n, files)
	}
	if merges := strings.TrimSpace(e.git("rev-list", "--merges", "--count", "HEAD")); merges != "1" {
		t.Fatalf("%s merge commits, want 1", merges)
	}
	e.checkGit()
}

// TestReviewLaterChunkSeesTheDream: under merge: review a run is one dream
// whose chunks stay on its branch, not in the live graph. A later chunk's
// fact about what an earlier chunk added must still meet that memory as a
// candidate (recall over the dream's own memories), so the model's UPDATE
// refines it instead of the no-lost-fact fallback adding a duplicate.
func TestReviewLaterChunkSeesTheDream(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.setMerge("review")
	e.cfg.ChunkChars = 120
	e.restart()
	e.addTranscript("transcripts/s.jsonl", jsonl(
		"I keep two beehives in the garden, it is a calm hobby.",
		"Update on the bees: I now keep three beehives, one more since spring."))
	e.script([]Fact{{Kind: "user", Slug: "keeps-beehives", Description: "Keeps beehives", Fact: "You keep two beehives.", Topic: "beekeeping"}},
		[]Decision{{Fact: 0, Action: ActionAdd}})
	e.script([]Fact{{Kind: "user", Slug: "keeps-beehives", Description: "Keeps beehives", Fact: "You keep three beehives."}},
		[]Decision{{Fact: 0, Action: ActionUpdate, Target: "user_memory/keeps-beehives", Text: "You keep three beehives."}})
	rep := e.run()
	if len(rep.Commits) != 2 || len(rep.Pending) != 1 {
		t.Fatalf("want two chunks in one waiting dream: %+v", rep)
	}
	dec := e.srv.CallsOf(llmtest.KindDecide)
	if len(dec) != 2 || !strings.Contains(dec[1].Prompt, "user_memory/keeps-beehives") {
		t.Fatalf("the second chunk was not shown the first chunk's memory:\n%s", dec[len(dec)-1].Prompt)
	}
	if rep.Added != 1 || rep.Updated != 1 || len(rep.Problems) != 0 {
		t.Fatalf("want one memory added then updated: %+v %q", rep, rep.Problems)
	}
	files := e.git("ls-tree", "-r", "--name-only", "mindmount/dream/1", "user_memory")
	if n := strings.Count(files, "user_memory/keeps-beehives"); n != 1 {
		t.Fatalf("the dream holds %d beehive memories, want 1:\n%s", n, files)
	}
	if got := e.git("show", "mindmount/dream/1:user_memory/keeps-beehives.md"); !strings.Contains(got, "You keep three beehives.") {
		t.Fatalf("the memory was not refined:\n%s", got)
	}
}

// TestActingOnALaterDreamLeavesAnEarlierOneWaiting: two dreams wait (the
// second run started past the first); rejecting or approving the second
// must not take the first off the list unmerged, and approving the first
// afterwards still brings its memory.
func TestActingOnALaterDreamLeavesAnEarlierOneWaiting(t *testing.T) {
	for _, act := range []string{"reject", "approve"} {
		t.Run(act, func(t *testing.T) {
			e := newEnv(t, "ollama", nil)
			e.setMerge("review")
			e.restart()
			e.addTranscript("transcripts/s1.jsonl", jsonl("I keep two beehives."))
			e.script([]Fact{{Kind: "user", Slug: "keeps-bees", Description: "Keeps bees", Fact: "You keep two beehives."}}, []Decision{{Fact: 0, Action: ActionAdd}})
			e.run()
			e.addTranscript("transcripts/s2.jsonl", jsonl("I am a pilot."))
			e.script([]Fact{{Kind: "user", Slug: "is-a-pilot", Description: "Is a pilot", Fact: "You are a pilot."}}, []Decision{{Fact: 0, Action: ActionAdd}})
			e.run()
			if ds, err := e.c.Dreams(); err != nil || len(ds) != 2 {
				t.Fatalf("dreams %v %v, want 2 waiting", ds, err)
			}
			var err error
			if act == "reject" {
				_, err = e.c.Reject(context.Background(), 2, "")
			} else {
				_, err = e.c.Approve(context.Background(), 2, e.tip(2))
			}
			if err != nil {
				t.Fatal(err)
			}
			ds, err := e.c.Dreams()
			if err != nil || len(ds) != 1 || ds[0].N != 1 {
				t.Fatalf("after %s of dream 2: %v %v, want dream 1 still waiting", act, ds, err)
			}
			if _, err := e.c.Approve(context.Background(), 1, e.tip(1)); err != nil {
				t.Fatal(err)
			}
			if !e.exists("user_memory/keeps-bees.md") || e.exists("user_memory/is-a-pilot.md") != (act == "approve") {
				t.Fatalf("after %s of dream 2 and approve of dream 1: wrong memories in main", act)
			}
			e.restart()
			if rep := e.run(); len(rep.Sources) != 0 {
				t.Fatalf("transcripts proposed again: %+v", rep)
			}
		})
	}
}

// tip is waiting dream n's tip, as review shows it.
func (e *env) tip(n int) string {
	e.t.Helper()
	ds, err := e.c.Dreams()
	if err != nil {
		e.t.Fatal(err)
	}
	for _, d := range ds {
		if d.N == n {
			return d.Tip
		}
	}
	e.t.Fatalf("dream %d does not wait: %v", n, ds)
	return ""
}
