package memgraph

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mindmount/mindmount/memgraph/recall"
)

// lazyQueries are asked of every index the tests compare.
var lazyQueries = []string{"berlin", "pixel dog", "lisbon moved", "answers short", "trip notes", "coffee morning", "fact 7 about coffee", "nothing matches this"}

// freshRecall is the reference: a recall index built directly from g's
// valid memories as they are now, with the graph's own expander.
func freshRecall(g *Graph) *recall.Index {
	ix := newRecallIndex()
	for _, k := range []Kind{KindUser, KindCharacter, KindExternal, KindSkill} {
		for _, m := range g.Memories(k) {
			ix.Put(RecallDoc(m))
		}
	}
	return ix
}

// sameRecall fails unless g's recall answers every query, active and all,
// exactly as want does (paths, scores, snippets, order).
func sameRecall(t *testing.T, g *Graph, want *recall.Index) {
	t.Helper()
	for _, q := range lazyQueries {
		for _, opt := range []recall.Options{{K: 20}, {K: 20, All: true}} {
			got, exp := g.Recall(q, opt), want.Search(q, opt)
			if !reflect.DeepEqual(got, exp) {
				t.Errorf("recall %q all=%v:\n got %+v\nwant %+v", q, opt.All, got, exp)
			}
		}
	}
}

// writeMem writes rel under dir and tells g, as the tracker does.
func writeMem(t *testing.T, g *Graph, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := g.Update(rel); err != nil {
		t.Fatal(err)
	}
}

func removeMem(t *testing.T, g *Graph, dir, rel string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
	g.Remove(rel)
}

// changeRepo makes changes of every kind: a new memory, a changed one, a
// removed one, a rename, a memory made invalid (its last valid version
// keeps serving) and a retired one.
func changeRepo(t *testing.T, g *Graph, dir string) {
	writeMem(t, g, dir, "user_memory/likes-coffee.md", recallMemory("Likes Coffee", "Drinks coffee every morning", "You drink coffee every morning before work.", "active"))
	writeMem(t, g, dir, "user_memory/has-dog-pixel.md", recallMemory("Has Dog Pixel", "Has a beagle called Pixel, now old", "You have an old beagle named Pixel.", "active"))
	removeMem(t, g, dir, "notes/trip.md")
	if err := os.Rename(filepath.Join(dir, "character_memory/be-brief.md"), filepath.Join(dir, "character_memory/answers-short.md")); err != nil {
		t.Fatal(err)
	}
	g.Rename("character_memory/be-brief.md", "character_memory/answers-short.md")
	writeMem(t, g, dir, "user_memory/lives-in-lisbon.md", "---\nbroken: [\n---\n# Lives In Lisbon\n")
	writeMem(t, g, dir, "user_memory/fact-7.md", recallMemory("Fact 7", "Fact 7 about coffee", "Told us fact 7 about coffee.", "retracted"))
}

// TestRecallBuiltLazily: however the index comes to be built (on the first
// recall, in the background, before or after changes), its answers are
// those of an index built fresh from the same memories, and of a graph
// scanned again from disk (the index a fresh start builds).
func TestRecallBuiltLazily(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, g *Graph, dir string)
	}{
		{"first recall builds it", func(t *testing.T, g *Graph, dir string) {}},
		{"background build", func(t *testing.T, g *Graph, dir string) { g.WarmRecall() }},
		{"changes before the build", func(t *testing.T, g *Graph, dir string) { changeRepo(t, g, dir) }},
		{"changes after the build", func(t *testing.T, g *Graph, dir string) {
			g.RecallIndex()
			changeRepo(t, g, dir)
		}},
		{"changes during a background build", func(t *testing.T, g *Graph, dir string) {
			g.WarmRecall()
			changeRepo(t, g, dir)
		}},
		{"closed during a background build", func(t *testing.T, g *Graph, dir string) {
			g.WarmRecall()
			g.Close()
			changeRepo(t, g, dir)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := recallRepo(t)
			g, err := Scan(dir)
			if err != nil {
				t.Fatal(err)
			}
			tt.run(t, g, dir)
			sameRecall(t, g, freshRecall(g))
			// A scan from disk knows no last valid version of a file
			// that is invalid now: make it valid before comparing.
			writeMem(t, g, dir, "user_memory/lives-in-lisbon.md", recallMemory("Lives In Lisbon", "Moved from Berlin to Lisbon", "You moved from Berlin to Lisbon.", "active"))
			again, err := Scan(dir)
			if err != nil {
				t.Fatal(err)
			}
			sameRecall(t, g, again.RecallIndex())
		})
	}
}

// TestScanBuildsNoRecallIndex: loading a repository does not build the
// recall index; the first recall does.
func TestScanBuildsNoRecallIndex(t *testing.T) {
	g, err := Scan(recallRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	if g.rbuilt.Load() || g.recall.Len() != 0 {
		t.Fatalf("Scan built the recall index (%d docs)", g.recall.Len())
	}
	if n := g.RecallIndex().Len(); n != 5 {
		t.Fatalf("first recall indexed %d memories, want 5 (blocks are not recalled)", n)
	}
}

// TestRecallBuildConcurrent races a background build with writers and
// readers (run with -race): whatever the interleaving, the index ends
// holding exactly the graph's memories.
func TestRecallBuildConcurrent(t *testing.T) {
	for round := 0; round < 5; round++ {
		dir := t.TempDir()
		for i := 0; i < 200; i++ {
			p := filepath.Join(dir, "user_memory", fmt.Sprintf("fact-%d.md", i))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(recallMemory(fmt.Sprintf("Fact %d", i), fmt.Sprintf("Fact %d about coffee", i), "The user likes coffee and berlin.", "active")), 0o644)
		}
		g, err := Scan(dir)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(3)
		go func() {
			defer wg.Done()
			g.WarmRecall()
		}()
		go func() { // writers: new, changed and removed memories
			defer wg.Done()
			for i := 0; i < 100; i++ {
				rel := fmt.Sprintf("user_memory/fact-%d.md", i)
				switch i % 3 {
				case 0:
					g.Remove(rel)
				case 1:
					g.Put(rel, []byte(recallMemory(fmt.Sprintf("Fact %d", i), fmt.Sprintf("Fact %d about tea now", i), "The user likes tea and lisbon.", "active")))
				default:
					g.Put(fmt.Sprintf("user_memory/new-%d.md", i), []byte(recallMemory("New", "A new fact about pixel", "Pixel is a dog.", "active")))
				}
			}
		}()
		go func() { // a reader
			defer wg.Done()
			for i := 0; i < 20; i++ {
				g.Recall("coffee tea pixel", recall.Options{K: 5})
			}
		}()
		wg.Wait()
		want := freshRecall(g)
		if got, exp := g.RecallIndex().Len(), want.Len(); got != exp {
			t.Fatalf("round %d: index holds %d docs, the graph %d", round, got, exp)
		}
		sameRecall(t, g, want)
		g.Close()
	}
}

// TestRecallChangeDuringBuild: a change made while the build indexes what
// it read of the graph reaches the index (it waits for the build, then
// applies), deterministically.
func TestRecallChangeDuringBuild(t *testing.T) {
	dir := recallRepo(t)
	g, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	afterRecallSnapshot = func() {
		v := g.Version()
		go func() {
			defer close(done)
			g.Put("user_memory/likes-coffee.md", []byte(recallMemory("Likes Coffee", "Drinks coffee every morning", "You drink coffee.", "active")))
			g.Remove("notes/trip.md")
		}()
		for deadline := time.Now().Add(60 * time.Second); g.Version() == v; {
			if time.Now().After(deadline) {
				t.Error("the change never reached the graph")
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	defer func() { afterRecallSnapshot = func() {} }()
	g.RecallIndex()
	<-done
	if hs := g.Recall("coffee morning", recall.Options{}); len(hs) == 0 {
		t.Error("a memory added during the build is not recalled")
	}
	sameRecall(t, g, freshRecall(g))
}
