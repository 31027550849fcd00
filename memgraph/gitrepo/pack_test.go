package gitrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestCommitDuringPack is issue 16.3: packing runs beside commits, never
// under the commit lock, and neither loses the other's work: every commit
// made while git gc runs is in the history with its content, the loose
// objects end up packed, and git fsck and git status are clean.
func TestCommitDuringPack(t *testing.T) {
	r, dir := tempRepo(t)
	var seed []Change
	for i := 0; i < 300; i++ {
		c := put(fmt.Sprintf("user_memory/m-%03d.md", i), "v0 "+strconv.Itoa(i)+"\n")
		writeFile(t, dir, c.Path, string(c.Data))
		seed = append(seed, c)
	}
	if _, err := r.Commit(seed, "seed", who, when); err != nil {
		t.Fatal(err)
	}
	commit := func(i int) {
		c := put(fmt.Sprintf("user_memory/m-%03d.md", i%300), fmt.Sprintf("v%d\n", i))
		writeFile(t, dir, c.Path, string(c.Data))
		if _, err := r.Commit([]Change{c}, "c"+strconv.Itoa(i), who, when); err != nil {
			t.Errorf("commit %d: %v", i, err)
		}
	}
	for i := 0; i < 40; i++ {
		commit(i)
	}
	before := r.Loose()
	packed := make(chan error, 1)
	go func() {
		var err error
		for k := 0; k < 3 && err == nil; k++ {
			err = r.Pack(context.Background())
		}
		packed <- err
	}()
	n := 40
	for ; n < 300; n++ {
		commit(n)
		select {
		case err := <-packed:
			if err != nil {
				t.Fatal(err)
			}
			packed = nil
		default:
		}
		if packed == nil && n >= 80 {
			break
		}
	}
	if packed != nil {
		if err := <-packed; err != nil {
			t.Fatal(err)
		}
	}
	if got := gitCmd(t, dir, "rev-list", "--count", "HEAD"); got != strconv.Itoa(n+1+1) && got != strconv.Itoa(n+1) {
		t.Fatalf("%s commits in the history, want %d", got, n+1)
	}
	// The last version of every file is in HEAD, read back through our
	// own reader (objects moved into packs under it).
	for i := n - 300; i <= n; i++ {
		if i < 0 {
			continue
		}
		rel := fmt.Sprintf("user_memory/m-%03d.md", i%300)
		b, ok, err := r.ReadHead(rel)
		want, _ := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || !ok || string(b) != string(want) {
			t.Fatalf("%s in HEAD: %q %v %v, want %q", rel, b, ok, err, want)
		}
	}
	packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
	if len(packs) == 0 {
		t.Fatalf("no pack written (loose before: %d, after: %d)", before, r.Loose())
	}
	checkClean(t, dir)
	writeFile(t, dir, "after.md", "x")
	if _, err := r.Commit([]Change{put("after.md", "x")}, "after", who, when); err != nil {
		t.Fatal(err)
	}
	checkClean(t, dir)
}
