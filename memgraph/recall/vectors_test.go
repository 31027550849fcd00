package recall

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// fakeEmbedder makes deterministic bag-of-words vectors in which the words
// of one concept share a dimension, so "canine" lands near "dog" the way a
// real embedding model would place them, while keyword recall cannot.
type fakeEmbedder struct {
	calls atomic.Int64
	texts atomic.Int64
}

var concepts = map[string]string{"canine": "dog", "puppy": "dog", "beagle": "dog", "hound": "dog"}

func (f *fakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.calls.Add(1)
	f.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 64)
		v[63] = 0.01 // never the zero vector
		for _, w := range Terms(t) {
			if c, ok := concepts[w]; ok {
				w = c
			}
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%63]++
		}
		out[i] = v
	}
	return out, nil
}

type failingEmbedder struct{ calls atomic.Int64 }

func (f *failingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.calls.Add(1)
	return nil, errors.New("connection refused")
}

func vectorDocs(ix *Index) {
	ix.Put(doc("user_memory/has-dog-pixel.md", "Has Dog Pixel", "Owns a beagle", "You have a beagle named Pixel."))
	ix.Put(doc("user_memory/likes-coffee.md", "Likes Coffee", "Enjoys specialty coffee", "You enjoy coffee."))
	ix.Put(doc("user_memory/plays-chess.md", "Plays Chess", "Plays chess online", "You play chess every evening."))
}

func TestVectorsFuseWithKeywords(t *testing.T) {
	ix := New()
	vectorDocs(ix)
	if got := ix.Search("canine companion", Options{}); len(got) != 0 {
		t.Fatalf("keyword alone should not know canine: %v", paths(got))
	}
	fe := &fakeEmbedder{}
	if err := ix.SetVectors(NewVectors(fe, "fake", t.TempDir()), false); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var last [2]int
	n, err := ix.Reindex(context.Background(), func(done, total int) { last = [2]int{done, total} })
	if err != nil || n != 3 || last != [2]int{3, 3} {
		t.Fatalf("Reindex = %d, %v, progress %v", n, err, last)
	}
	got := ix.Search("canine companion", Options{})
	if len(got) == 0 || got[0].Path != "user_memory/has-dog-pixel.md" {
		t.Fatalf("with vectors: %v", paths(got))
	}
	// Keyword matches still lead when both agree.
	if got := ix.Search("chess", Options{}); got[0].Path != "user_memory/plays-chess.md" {
		t.Errorf("chess: %v", paths(got))
	}
	// Retired docs stay out of the vector side too.
	ix.Put(Doc{Path: "user_memory/old-dog.md", Kind: "user", Title: "Dog", Description: "dog", Fact: "dog", Status: "superseded"})
	if _, err := ix.Reindex(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for _, h := range ix.Search("canine puppy hound", Options{K: 10}) {
		if h.Path == "user_memory/old-dog.md" {
			t.Errorf("retired memory returned through vectors")
		}
	}
}

func TestVectorsCacheIsReused(t *testing.T) {
	dir := t.TempDir()
	fe := &fakeEmbedder{}
	ix := New()
	vectorDocs(ix)
	if err := ix.SetVectors(NewVectors(fe, "fake", dir), false); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Reindex(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if fe.texts.Load() != 3 {
		t.Fatalf("embedded %d texts", fe.texts.Load())
	}

	// A new process: same texts, same model, no model calls at all.
	fe2 := &fakeEmbedder{}
	ix2 := New()
	vectorDocs(ix2)
	if err := ix2.SetVectors(NewVectors(fe2, "fake", dir), false); err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	if w, n := ix2.VectorCount(); w != 3 || n != 3 {
		t.Fatalf("VectorCount = %d/%d", w, n)
	}
	if n, _ := ix2.Reindex(context.Background(), nil); n != 0 || fe2.texts.Load() != 0 {
		t.Fatalf("reindex from cache embedded %d (%d texts)", n, fe2.texts.Load())
	}

	// Another model does not reuse the first model's vectors.
	ix3 := New()
	vectorDocs(ix3)
	if err := ix3.SetVectors(NewVectors(fe2, "other", dir), false); err != nil {
		t.Fatal(err)
	}
	defer ix3.Close()
	if w, _ := ix3.VectorCount(); w != 0 {
		t.Fatalf("other model found %d vectors", w)
	}
}

func TestVectorsTornCacheFile(t *testing.T) {
	dir := t.TempDir()
	v := NewVectors(&fakeEmbedder{}, "fake", dir)
	if _, err := v.Embed(context.Background(), []string{"a dog", "a cat"}); err != nil {
		t.Fatal(err)
	}
	v.Close()
	fi, err := os.Stat(v.file())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(v.file(), fi.Size()-5); err != nil {
		t.Fatal(err)
	}
	v2 := NewVectors(&fakeEmbedder{}, "fake", dir)
	if err := v2.Load(); err != nil {
		t.Fatal(err)
	}
	if v2.Len() != 1 {
		t.Fatalf("Len after torn tail = %d, want 1", v2.Len())
	}
	if filepath.Dir(v.file()) != dir {
		t.Fatalf("cache outside its dir: %s", v.file())
	}
}

func TestVectorsBackgroundFill(t *testing.T) {
	fe := &fakeEmbedder{}
	ix := New()
	if err := ix.SetVectors(NewVectors(fe, "fake", ""), true); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	vectorDocs(ix) // Put does not wait for the model
	waitFor(t, func() bool { w, _ := ix.VectorCount(); return w == 3 })
	got := ix.Search("canine", Options{})
	if len(got) == 0 || got[0].Path != "user_memory/has-dog-pixel.md" {
		t.Fatalf("background vectors not used: %v", paths(got))
	}
	// A changed memory is embedded again.
	ix.Put(doc("user_memory/plays-chess.md", "Plays Go", "Plays go online", "You play go every evening."))
	waitFor(t, func() bool { w, _ := ix.VectorCount(); return w == 3 })
}

func TestVectorsFailingModelKeepsKeywordRecall(t *testing.T) {
	fe := &failingEmbedder{}
	ix := New()
	v := NewVectors(fe, "down", t.TempDir())
	if err := ix.SetVectors(v, true); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	vectorDocs(ix)
	waitFor(t, func() bool { return fe.calls.Load() > 0 })
	got := ix.Search("chess", Options{})
	if len(got) != 1 || got[0].Path != "user_memory/plays-chess.md" {
		t.Fatalf("keyword recall with a failing model: %v", paths(got))
	}
	if _, err := ix.Reindex(context.Background(), nil); err == nil {
		t.Fatal("Reindex with a failing model should fail")
	}
	// The query path uses vectors only when some exist; seed one and the
	// failing query embedding must still fall back to keywords.
	if err := v.store(v.key("x"), []float32{1}); err != nil {
		t.Fatal(err)
	}
	got = ix.Search("chess", Options{})
	if len(got) != 1 || got[0].Path != "user_memory/plays-chess.md" {
		t.Fatalf("keyword fallback after failed query embedding: %v", paths(got))
	}
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached before the deadline")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestVectorsCompact(t *testing.T) {
	dir := t.TempDir()
	ix := New()
	if err := ix.SetVectors(NewVectors(&fakeEmbedder{}, "fake", dir), false); err != nil {
		t.Fatal(err)
	}
	// Many versions of one memory leave many stale vectors behind.
	for i := range compactSlack + 10 {
		ix.Put(doc("a.md", "Dog", "dog", fmt.Sprintf("version %d", i)))
		if _, err := ix.Reindex(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
	ix.Close()
	v := NewVectors(&fakeEmbedder{}, "fake", dir)
	if err := v.Load(); err != nil {
		t.Fatal(err)
	}
	if v.Len() > compactSlack+2 {
		t.Fatalf("cache holds %d vectors for 1 memory", v.Len())
	}
	ix2 := New()
	ix2.Put(doc("a.md", "Dog", "dog", fmt.Sprintf("version %d", compactSlack+9)))
	if err := ix2.SetVectors(v, false); err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	if w, _ := ix2.VectorCount(); w != 1 {
		t.Fatalf("live vector lost in compaction")
	}
}
