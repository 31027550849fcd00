package consolidate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// word turns i into a letters-only token, unique per i, so keyword recall
// finds exactly the memory made for it.
func word(i int) string {
	const letters = "bcdfghjklmnpqrstvwxz"
	s := []byte{'q'}
	for {
		s = append(s, letters[i%len(letters)])
		i /= len(letters)
		if i == 0 {
			break
		}
	}
	return string(s) + "ix"
}

// benchRepo builds a committed repository of n user memories.
func benchRepo(b testing.TB, n int) (string, *gitrepo.Repo, *memgraph.Graph) {
	b.Helper()
	dir := b.TempDir()
	r, err := gitrepo.Init(dir)
	if err != nil {
		b.Fatal(err)
	}
	changes := make([]gitrepo.Change, 0, n)
	for i := 0; i < n; i++ {
		rel := fmt.Sprintf("user_memory/m-%05d.md", i)
		data := memoryFile("Enjoys "+word(i)+" gardening", "M "+word(i), "You enjoy "+word(i)+" gardening.", "01.11.26")
		abs := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(abs), 0o755)
		if err := os.WriteFile(abs, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
		changes = append(changes, gitrepo.Change{Path: rel, Data: []byte(data)})
	}
	if _, err := r.Commit(changes, "seed", gitrepo.Author{Name: "bench", Email: "b@x"}, testNow); err != nil {
		b.Fatal(err)
	}
	g, err := memgraph.Scan(dir)
	if err != nil {
		b.Fatal(err)
	}
	return dir, r, g
}

// BenchmarkApply100Decisions measures one chunk's work minus the model:
// candidate recall for 100 facts, planning 100 decisions (40 ADD, 30
// UPDATE, 15 DELETE, 15 NONE) against the dream's snapshot, validation,
// the commit on the dream's branch and its merge into main, in a
// repository of 10,000 memories.
func BenchmarkApply100Decisions(b *testing.B) {
	_, r, g := benchRepo(b, 10000)
	c := New(tracker.New(g, r, tracker.Config{Logger: quietLogger()}), fakeProvider{}, Config{Logger: quietLogger(), Now: func() time.Time { return testNow }})
	cur, _ := ParseCursor(nil)
	tr := ParseTranscript("transcripts/bench.jsonl", []byte(jsonl("x")))
	var recallT, planT, commitT, mergeT time.Duration
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		d, err := c.newDream(0)
		if err != nil {
			b.Fatal(err)
		}
		base := (it * 100) % 9900
		facts := make([]Fact, 100)
		decs := make([]*Decision, 100)
		for j := range facts {
			i := base + j
			switch {
			case j < 40:
				facts[j] = Fact{Kind: "user", Slug: fmt.Sprintf("new-%d-%d", it, j), Description: "Collects " + word(100000+it*100+j) + " stamps", Fact: "You collect stamps."}
				decs[j] = &Decision{Fact: j, Action: ActionAdd}
			default:
				facts[j] = Fact{Kind: "user", Slug: "x", Description: "Enjoys " + word(i) + " gardening a lot", Fact: "You enjoy " + word(i) + " gardening a lot."}
				act := ActionUpdate
				if j >= 70 {
					act = ActionDelete
				}
				if j >= 85 {
					act = ActionNone
				}
				decs[j] = &Decision{Fact: j, Action: act, Target: fmt.Sprintf("user_memory/m-%05d", i), Description: "Enjoys " + word(i) + " gardening a lot", Text: "You enjoy " + word(i) + " gardening a lot."}
			}
		}
		s := &chunkRun{c: c, d: d, src: fmt.Sprintf("transcripts/bench.jsonl#%d", it+1), now: testNow, snap: map[string][]byte{}, head: map[string][]byte{}}
		t0 := time.Now()
		cands := s.candidatesAll(context.Background(), facts)
		t1 := time.Now()
		out := s.plan(facts, cands, decs)
		// A contradiction adds a file and retires one: 40 + 15 new files.
		if out.added != 55 || out.contradicted != 15 || out.updated != 30 || out.unchanged != 15 {
			b.Fatalf("planned %d added, %d updated, %d contradicted, %d unchanged; %v", out.added, out.updated, out.contradicted, out.unchanged, out.problems[:min(3, len(out.problems))])
		}
		next := cur.Clone()
		next.Advance(tr, 1)
		t2 := time.Now()
		if _, err := s.commit(out, next); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		if _, err := c.merge(context.Background(), d, "", 0); err != nil {
			b.Fatal(err)
		}
		t4 := time.Now()
		recallT += t1.Sub(t0)
		planT += t2.Sub(t1)
		commitT += t3.Sub(t2)
		mergeT += t4.Sub(t3)
		cur = next
	}
	// Where the time goes, per op: recall, planning (snapshot reads, edits,
	// validation), the dream's commit (objects only) and its merge (work
	// tree, one flush, the ref).
	b.ReportMetric(float64(recallT.Microseconds())/float64(b.N)/1000, "recall-ms/op")
	b.ReportMetric(float64(planT.Microseconds())/float64(b.N)/1000, "plan-ms/op")
	b.ReportMetric(float64(commitT.Microseconds())/float64(b.N)/1000, "commit-ms/op")
	b.ReportMetric(float64(mergeT.Microseconds())/float64(b.N)/1000, "merge-ms/op")
}

// BenchmarkDreamMerge10k measures a dream's merge in a repository of
// 10,000 memories: the dream changed 100 memories (40 new, 60 refined)
// while the agent committed 50 memories of its own, 10 of them ones the
// dream refined too (merged by the drivers' stand-in, which keeps both
// sides' bytes). The baseline is what a run did before dreams: one commit
// of the same 100 files straight into the work tree and main. The ratio
// is printed.
func BenchmarkDreamMerge10k(b *testing.B) {
	_, r, g := benchRepo(b, 10000)
	tr := tracker.New(g, r, tracker.Config{Logger: quietLogger()})
	// A stand-in for hooks.DreamMerger (consolidate may not import hooks):
	// the live version stays, the dream's is kept beside it.
	merger := func(rel string, base, ours, theirs []byte, taken func(string) bool) ([]byte, bool, string, []byte, error) {
		return ours, false, strings.TrimSuffix(rel, ".md") + "-dream.md", theirs, nil
	}
	c := New(tr, fakeProvider{}, Config{Logger: quietLogger(), Now: func() time.Time { return testNow }, MergeFile: merger})
	agent := gitrepo.Writer("agent")
	var mergeT, baseT time.Duration
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		d, err := c.newDream(0)
		if err != nil {
			b.Fatal(err)
		}
		var dreamCh []gitrepo.Change
		for j := range 100 {
			rel := fmt.Sprintf("user_memory/new-%d-%d.md", it, j)
			if j >= 40 {
				rel = fmt.Sprintf("user_memory/m-%05d.md", (it*100+j)%10000)
			}
			dreamCh = append(dreamCh, gitrepo.Change{Path: rel, Data: []byte(memoryFile("Dreamt "+word(it*1000+j), "D", fmt.Sprintf("Dreamt %d.", it)))})
		}
		if _, err := c.commitDream(d, dreamCh, "consolidate bench: dream\n", testNow); err != nil {
			b.Fatal(err)
		}
		var agentCh []gitrepo.Change
		for j := range 50 {
			rel := fmt.Sprintf("user_memory/m-%05d.md", (it*100+5000+j)%10000)
			if j < 10 {
				rel = fmt.Sprintf("user_memory/m-%05d.md", (it*100+40+j)%10000) // the dream refined it too
			}
			agentCh = append(agentCh, gitrepo.Change{Path: rel, Data: []byte(memoryFile("Agent "+word(it*1000+j), "A", fmt.Sprintf("Agent %d.", it)))})
		}
		if _, err := tr.Apply(context.Background(), tracker.Change{Changes: agentCh, Message: "agent", Author: agent, Worktree: true}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		if _, err := c.merge(context.Background(), d, "", 0); err != nil {
			b.Fatal(err)
		}
		mergeT += time.Since(t0)
		b.StopTimer()
		// The baseline: the same 100 files committed straight into main.
		for i := range dreamCh {
			dreamCh[i].Data = append(dreamCh[i].Data, "used, 02.11.26\n"...)
		}
		t1 := time.Now()
		if _, err := tr.Apply(context.Background(), tracker.Change{Changes: dreamCh, Message: "baseline", Author: Author, Worktree: true}); err != nil {
			b.Fatal(err)
		}
		baseT += time.Since(t1)
		b.StartTimer()
	}
	b.ReportMetric(float64(mergeT.Microseconds())/float64(b.N)/1000, "merge-ms/op")
	b.ReportMetric(float64(baseT.Microseconds())/float64(b.N)/1000, "plain-commit-ms/op")
	b.ReportMetric(float64(mergeT)/float64(baseT), "merge/plain")
}

// fakeProvider answers nothing; the apply benchmark never calls it.
type fakeProvider struct{}

func (fakeProvider) Chat(context.Context, llm.ChatRequest) (string, error) { return "{}", nil }
func (fakeProvider) Embed(context.Context, []string) ([][]float32, error) {
	return nil, nil
}
func (fakeProvider) Name() string  { return "fake" }
func (fakeProvider) Model() string { return "instant" }

// BenchmarkRun30Messages is an end-to-end run on 30 new messages (15 user,
// 15 assistant) through the real Ollama client and the fake server
// answering instantly: 3 facts extracted, 3 decisions (ADD, UPDATE, NONE),
// one commit, in a repository of 1,000 memories.
func BenchmarkRun30Messages(b *testing.B) {
	dir, r, g := benchRepo(b, 1000)
	srv := llmtest.New(b)
	var n atomic.Int64
	srv.Handle(func(c llmtest.Call) llmtest.Reply {
		k := n.Add(1)
		if c.Kind == llmtest.KindExtract {
			return llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []Fact{
				{Kind: "user", Slug: fmt.Sprintf("plays-%d", k), Description: "Plays " + word(50000+int(k)), Fact: "You play it."},
				{Kind: "user", Slug: "g", Description: "Enjoys " + word(int(k)%1000) + " gardening a lot", Fact: "You enjoy it a lot."},
				{Kind: "user", Slug: "h", Description: "Enjoys " + word(int(k+500)%1000) + " gardening", Fact: "You enjoy it."},
			}})}
		}
		return llmtest.Reply{Content: llmtest.JSON(map[string]any{"decisions": []Decision{
			{Fact: 0, Action: ActionAdd},
			{Fact: 1, Action: ActionUpdate, Target: fmt.Sprintf("user_memory/m-%05d", (k-1)%1000), Text: "You enjoy it a lot."},
			{Fact: 2, Action: ActionNone, Target: fmt.Sprintf("user_memory/m-%05d", (k+499)%1000)},
		}})}
	})
	c := New(tracker.New(g, r, tracker.Config{Logger: quietLogger()}), llm.NewOllama(srv.OllamaURL(), "fake"), Config{Logger: quietLogger(), Now: func() time.Time { return testNow }})
	var msgs []string
	for i := 0; i < 30; i++ {
		msgs = append(msgs, fmt.Sprintf("Message %d: I spend my weekends on the allotment growing tomatoes and beans.", i))
	}
	body := jsonl(msgs...)
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		if it > 0 {
			os.Remove(filepath.Join(dir, "transcripts", fmt.Sprintf("b%d.jsonl", it-1)))
		}
		os.MkdirAll(filepath.Join(dir, "transcripts"), 0o755)
		os.WriteFile(filepath.Join(dir, "transcripts", fmt.Sprintf("b%d.jsonl", it)), []byte(body), 0o644)
		b.StartTimer()
		rep, err := c.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if rep.Messages != 30 || rep.Added != 1 || rep.Updated+rep.Unchanged != 2 {
			b.Fatalf("report %+v %s", rep, strings.Join(rep.Problems, "; "))
		}
	}
}

// BenchmarkDreamBase10k compares the two ways a dream can work against a
// pinned base in a repository of 10,000 memories: in objects only (what
// dream.go does: read the 100 memories a chunk looks at from the base
// commit, no checkout) and in a worktree of its own (git worktree add of
// the base, the same reads from disk, git worktree remove).
func BenchmarkDreamBase10k(b *testing.B) {
	dir, r, _ := benchRepo(b, 10000)
	head, err := r.Head()
	if err != nil {
		b.Fatal(err)
	}
	rels := make([]string, 100)
	for i := range rels {
		rels[i] = fmt.Sprintf("user_memory/m-%05d.md", i*97%10000)
	}
	b.Run("objects", func(b *testing.B) {
		for range b.N {
			for _, rel := range rels {
				if _, ok, err := r.ReadAt(head, rel); err != nil || !ok {
					b.Fatal(rel, err)
				}
			}
		}
	})
	b.Run("worktree", func(b *testing.B) {
		wt := filepath.Join(b.TempDir(), "dream")
		for range b.N {
			if out, err := exec.Command("git", "-C", dir, "worktree", "add", "-q", "--detach", wt, head).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			for _, rel := range rels {
				if _, err := os.ReadFile(filepath.Join(wt, filepath.FromSlash(rel))); err != nil {
					b.Fatal(err)
				}
			}
			if out, err := exec.Command("git", "-C", dir, "worktree", "remove", "--force", wt).CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}
