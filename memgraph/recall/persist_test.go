package recall

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// sameAnswers fails unless got answers every bench query as want does.
func sameAnswers(t *testing.T, got, want *Index) {
	t.Helper()
	for _, q := range append(benchQueries, "allergi", "nothing here at all") {
		for _, opt := range []Options{{K: 20}, {K: 20, All: true}, {K: 5, Kind: "user"}} {
			if g, w := got.Search(q, opt), want.Search(q, opt); !reflect.DeepEqual(g, w) {
				t.Fatalf("search %q %+v:\n got %+v\nwant %+v", q, opt, g, w)
			}
		}
	}
}

// TestSaveLoadRoundTrip: a loaded index answers as the one saved, and
// saves back to the same bytes.
func TestSaveLoadRoundTrip(t *testing.T) {
	ix := benchIndex(300)
	ix.Delete("user_memory/m-00007.md") // a freed id in the saved index
	b := ix.Marshal(CurrentKey())
	got := New()
	got.Put(Doc{Path: "user_memory/gone.md", Title: "replaced by the load"})
	if err := got.Load(b, CurrentKey()); err != nil {
		t.Fatal(err)
	}
	sameAnswers(t, got, ix)
	if got.Len() != ix.Len() {
		t.Fatalf("loaded %d docs, want %d", got.Len(), ix.Len())
	}
	if string(got.Marshal(CurrentKey())) != string(b) {
		t.Fatal("a loaded index saves other bytes")
	}
}

// TestLoadRefuses: another key, another version, a changed byte or a cut
// file is ErrStale, and the index keeps what it held.
func TestLoadRefuses(t *testing.T) {
	good := benchIndex(50).Marshal(CurrentKey())
	var other Key
	other[0] = 1
	version := append([]byte(nil), good...)
	version[7]++
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 1
	for name, tc := range map[string]struct {
		b   []byte
		key Key
	}{
		"other key":   {good, other},
		"version":     {version, CurrentKey()},
		"flipped":     {flipped, CurrentKey()},
		"cut":         {good[:len(good)-40], CurrentKey()},
		"empty":       {nil, CurrentKey()},
		"header only": {good[:40], CurrentKey()},
	} {
		t.Run(name, func(t *testing.T) {
			ix := New()
			ix.Put(Doc{Path: "user_memory/kept.md", Title: "kept", Active: true})
			if err := ix.Load(tc.b, tc.key); !errors.Is(err, ErrStale) {
				t.Fatalf("Load: %v, want ErrStale", err)
			}
			if ix.Len() != 1 || len(ix.Search("kept", Options{})) != 1 {
				t.Fatal("a refused load changed the index")
			}
		})
	}
}

// TestReconcile: a loaded index brought to other documents answers as one
// built from them, and counts only what differed.
func TestReconcile(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ix := benchIndex(200)
	loaded := New()
	if err := loaded.Load(ix.Marshal(CurrentKey()), CurrentKey()); err != nil {
		t.Fatal(err)
	}
	want := New()
	var docs []Doc
	rr := rand.New(rand.NewPCG(1, 2)) // benchIndex's documents, again
	for i := range 200 {
		d := benchDoc(rr, i)
		switch {
		case i == 3:
			continue // deleted
		case i == 4:
			d.Uses++ // a use counted
		case i == 5:
			d = benchDoc(r, 1000) // rewritten
			d.Path = "user_memory/m-00005.md"
		}
		docs = append(docs, d)
	}
	docs = append(docs, Doc{Path: "user_memory/new.md", Title: "new allergy", Active: true})
	for _, d := range docs {
		want.Put(d)
	}
	if n := loaded.Reconcile(docs); n != 4 {
		t.Fatalf("Reconcile changed %d docs, want 4", n)
	}
	sameAnswers(t, loaded, want)
	if n := loaded.Reconcile(docs); n != 0 {
		t.Fatalf("second Reconcile changed %d docs, want 0", n)
	}
}

// TestLoadFileRefusesForeign: a saved file writable by others, a link in
// its place, or (as root) a file of another owner is never read.
func TestLoadFileRefusesForeign(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mindmount", "recall.idx")
	ix := benchIndex(20)
	if err := ix.SaveFile(file, CurrentKey()); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved with mode %v", fi.Mode().Perm())
	}
	if err := New().LoadFile(file, CurrentKey()); err != nil {
		t.Fatalf("own file: %v", err)
	}
	os.Chmod(file, 0o620)
	if err := New().LoadFile(file, CurrentKey()); !errors.Is(err, ErrStale) {
		t.Fatalf("group-writable file: %v, want ErrStale", err)
	}
	os.Chmod(file, 0o600)
	link := filepath.Join(dir, "mindmount", "link.idx")
	os.Symlink(file, link)
	if err := New().LoadFile(link, CurrentKey()); err == nil {
		t.Fatal("a link was followed")
	}
	if os.Geteuid() != 0 {
		return
	}
	os.Chown(file, 54321, 54321)
	if err := New().LoadFile(file, CurrentKey()); !errors.Is(err, ErrStale) {
		t.Fatalf("file of another owner: %v, want ErrStale", err)
	}
}

// TestSaveFileOnlyAsOwner: root saving into another user's git directory
// writes nothing (the file would be root's).
func TestSaveFileOnlyAsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to own a directory as another user")
	}
	gitDir := t.TempDir()
	os.Chown(gitDir, 54321, 54321)
	file := filepath.Join(gitDir, "mindmount", "recall.idx")
	if err := benchIndex(5).SaveFile(file, CurrentKey()); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("SaveFile: %v, want ErrNotOwner", err)
	}
	if _, err := os.Stat(filepath.Dir(file)); err == nil {
		t.Fatal("a directory was created in another user's git directory")
	}
}

// FuzzLoad: no input makes Load panic or leave an index that cannot be
// searched, changed and saved; the payload is fuzzed past the checksum too.
func FuzzLoad(f *testing.F) {
	good := benchIndex(5).Marshal(CurrentKey())
	f.Add(good, false)
	f.Add(good[40:len(good)-32], true)
	f.Add([]byte("MMRI"), false)
	f.Fuzz(func(t *testing.T, b []byte, payloadOnly bool) {
		ix := New()
		if payloadOnly {
			var err error
			if ix, err = decodeIndex(string(b)); err != nil {
				return
			}
		} else if err := ix.Load(b, CurrentKey()); err != nil {
			return
		}
		ix.Search("dog coffee allergy", Options{K: 5, All: true})
		again := New()
		if err := again.Load(ix.Marshal(CurrentKey()), CurrentKey()); err != nil {
			t.Fatalf("a loaded index does not load back: %v", err)
		}
		for _, p := range []string{"user_memory/m-00001.md", "user_memory/m-00002.md"} {
			ix.Delete(p)
		}
		ix.Put(Doc{Path: "user_memory/m-00003.md", Title: "dog"})
	})
}

// BenchmarkStartIndex compares the two ways a start gets its index of
// 10,000 memories: loading the saved file (and reconciling it with the
// memories, all unchanged) against building it; it prints the ratio.
func BenchmarkStartIndex(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	docs := make([]Doc, 10000)
	for i := range docs {
		docs[i] = benchDoc(r, i)
	}
	saved := benchIndex(len(docs)).Marshal(CurrentKey())
	var build, load time.Duration
	b.Run("build", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			ix := New()
			for _, d := range docs {
				ix.Put(d)
			}
		}
		build = time.Since(start) / time.Duration(b.N)
	})
	b.Run("load", func(b *testing.B) {
		start := time.Now()
		for b.Loop() {
			ix := New()
			if err := ix.Load(saved, CurrentKey()); err != nil {
				b.Fatal(err)
			}
			ix.Reconcile(docs)
		}
		load = time.Since(start) / time.Duration(b.N)
	})
	if build > 0 && load > 0 {
		b.Logf("10,000 memories: build %v, load %v (%d KiB): load/build %.2f", build, load, len(saved)>>10, float64(load)/float64(build))
	}
}
