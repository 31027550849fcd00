package gitrepo

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentApply: several writers committing different files and the
// same file at once; every commit lands, nothing is lost, git is happy.
func TestConcurrentApply(t *testing.T) {
	r, dir := tempRepo(t)
	const writers, rounds = 4, 8
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds*2)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				own := put(fmt.Sprintf("w%d/file.md", w), fmt.Sprintf("writer %d round %d\n", w, i))
				shared := put("shared.md", fmt.Sprintf("writer %d round %d\n", w, i))
				if _, err := r.Apply([]Change{own, shared}, fmt.Sprintf("w%d r%d", w, i), who, when); err != nil {
					errs <- err
				}
				if _, _, err := r.ReadHead("shared.md"); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkClean(t, dir)
	for w := 0; w < writers; w++ {
		b, ok, err := r.ReadHead(fmt.Sprintf("w%d/file.md", w))
		if err != nil || !ok || string(b) != fmt.Sprintf("writer %d round %d\n", w, rounds-1) {
			t.Fatalf("w%d/file.md = %q %v %v", w, b, ok, err)
		}
	}
	if n := gitCmd(t, dir, "rev-list", "--count", "HEAD"); n != fmt.Sprint(writers*rounds) {
		t.Fatalf("%s commits, want %d", n, writers*rounds)
	}
}

// TestFileDirectorySwaps: names that sort differently as a file and as a
// directory ("a" vs "a.md" vs "a-b") keep every tree in git's order.
func TestFileDirectorySwaps(t *testing.T) {
	r, dir := tempRepo(t)
	apply(t, r, "files", put("a", "1"), put("a.md", "2"), put("a-b", "3"), put("a0", "4"))
	apply(t, r, "a becomes a dir", del("a"), put("a/x.md", "5"))
	checkClean(t, dir)
	apply(t, r, "a.md becomes a dir", del("a.md"), put("a.md/y", "6"))
	checkClean(t, dir)
	apply(t, r, "a is a file again", del("a/x.md"), put("a", "7"))
	checkClean(t, dir)
	got := gitCmd(t, dir, "ls-tree", "-r", "--name-only", "HEAD")
	if want := strings.Join([]string{"a", "a-b", "a.md/y", "a0"}, "\n"); got != want {
		t.Fatalf("files:\n%s\nwant:\n%s", got, want)
	}
}

// TestAfterGC: objects moved into a pack and refs packed by "git gc" are
// still found, and commits continue on top.
func TestAfterGC(t *testing.T) {
	r, dir := tempRepo(t)
	apply(t, r, "one", put("a.md", "a\n"), put("d/b.md", "b\n"))
	if _, _, err := r.ReadHead("a.md"); err != nil { // warm go-git's caches
		t.Fatal(err)
	}
	gitCmd(t, dir, "gc", "-q", "--prune=now")
	r.trees = newTreeCache() // force reads from the pack
	if b, ok, err := r.ReadHead("d/b.md"); err != nil || !ok || string(b) != "b\n" {
		t.Fatalf("ReadHead after gc = %q %v %v", b, ok, err)
	}
	apply(t, r, "two", put("d/c.md", "c\n"))
	checkClean(t, dir)
	if got := gitCmd(t, dir, "log", "--format=%s"); got != "two\none" {
		t.Fatalf("log after gc:\n%s", got)
	}
}

func FuzzParseTree(f *testing.F) {
	f.Add(encodeTree([]treeEntry{{name: "a", mode: modeFile}, {name: "b", mode: modeTree}}))
	f.Add([]byte("100644 x\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := parseTree(b)
		if err != nil {
			return
		}
		if again, err := parseTree(encodeTree(es)); err != nil || len(again) != len(es) {
			t.Fatalf("re-parse: %v, %d != %d entries", err, len(again), len(es))
		}
	})
}
