package tracker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
	"github.com/mindmount/mindmount/memgraph"
)

// limitedTracker opens dir with an operator file that sets tree_limit_mib.
func limitedTracker(t *testing.T, dir, limit string) *tracker.Tracker {
	t.Helper()
	op := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(op, []byte("tree_limit_mib: "+limit+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tr, _, _ := open(t, dir, tracker.Config{Operator: &memgraph.OperatorSource{Path: op}})
	return tr
}

// TestTreeLimitRunningTotal: the running total follows every report the
// mount makes, and equals what a fresh count of the tree finds; a grow
// past the limit is a *TreeFullError (errors.Is ErrTreeFull) that names
// the limit, and leaves the total as it was.
func TestTreeLimitRunningTotal(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr := limitedTracker(t, dir, "1")
	base, limit := tr.TreeUsage()
	if limit != 1<<20 {
		t.Fatalf("limit %d, want 1 MiB", limit)
	}
	steps := []struct {
		name string
		do   func() error
		want int64 // total after, relative to base
	}{
		{"grow a new file", func() error { return tr.Grow("a.bin", 1000) }, 1000},
		{"a write inside it", func() error { return tr.Grow("a.bin", 10) }, 1000},
		{"append", func() error { return tr.AppendRoom("a.bin", 24) }, 1024},
		{"truncate down", func() error { return tr.Truncate("a.bin", 512) }, 512},
		{"rename", func() error { tr.Moved("a.bin", "d/b.bin"); return nil }, 512},
		{"rename the folder", func() error { tr.Moved("d", "e"); return nil }, 512},
		{"under .git: not counted", func() error { return tr.Grow(".git/x", 5<<20) }, 512},
		{"remove the folder", func() error { tr.Removed("e"); return nil }, 0},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if used, _ := tr.TreeUsage(); used != base+s.want {
			t.Fatalf("%s: total %d, want %d", s.name, used, base+s.want)
		}
	}
	err := tr.Grow("big.bin", 2<<20)
	var full *tracker.TreeFullError
	if !errors.Is(err, tracker.ErrTreeFull) || !errors.As(err, &full) || full.Limit != 1<<20 {
		t.Fatalf("2 MiB in a 1 MiB tree: %v", err)
	}
	if !strings.Contains(err.Error(), "1.0 MiB limit") || !strings.Contains(err.Error(), "tree_limit_mib") {
		t.Errorf("the refusal does not name the limit and its key: %v", err)
	}
	if used, _ := tr.TreeUsage(); used != base {
		t.Errorf("a refused grow changed the total: %d, want %d", used, base)
	}
}

// TestTreeLimitAsk: an MCP edit asks before it writes: content that would
// take the tree past its limit is refused with ErrTreeFull; the same
// content under "tree_limit_mib: 0" (no limit) passes.
func TestTreeLimitAsk(t *testing.T) {
	dir := conformance.NewRepo(t)
	big := strings.Repeat("word ", 300_000)
	ps, err := limitedTracker(t, dir, "1").Ask("notes/big.txt", []byte(big))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || !errors.Is(ps[0].Err, tracker.ErrTreeFull) {
		t.Fatalf("problems %v, want one ErrTreeFull", ps)
	}
	ps, err = limitedTracker(t, dir, "0").Ask("notes/big.txt", []byte(big))
	if err != nil || len(ps) != 0 {
		t.Fatalf("no limit: %v %v", ps, err)
	}
}

// BenchmarkTreeLimitGrow: the size rule's cost per write through the
// mount (one Grow of a file that keeps growing), against the same call
// with no limit (tree_limit_mib: 0), its natural baseline.
func BenchmarkTreeLimitGrow(b *testing.B) {
	for _, limit := range []string{"0", "1024"} {
		b.Run("tree_limit_mib="+limit, func(b *testing.B) {
			dir := conformance.NewRepo(b)
			op := filepath.Join(b.TempDir(), "config")
			if err := os.WriteFile(op, []byte("tree_limit_mib: "+limit+"\n"), 0o600); err != nil {
				b.Fatal(err)
			}
			tr, _, _ := open(b, dir, tracker.Config{Operator: &memgraph.OperatorSource{Path: op}})
			tr.TreeUsage() // the one walk, outside the loop
			b.ResetTimer()
			for i := range b.N {
				if err := tr.Grow("notes/log.txt", int64(i+1)*128); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTreeLimitApply: a prepared change that writes the work tree (the
// web page, consolidation, a sync's merge) is held to the limit. In a tree
// already past it, a change that grows the tree is refused with a
// *RefusedError whose reason is the *TreeFullError (nothing written, HEAD
// unmoved); one that keeps the size or shrinks the tree passes, even when
// it grows one file; once there is room, a change within it passes, and a
// commit on another branch (a dream) never touches the tree.
func TestTreeLimitApply(t *testing.T) {
	dir := conformance.NewRepo(t)
	conformance.WriteFile(t, dir, "big.bin", strings.Repeat("b", 1100<<10))
	conformance.WriteFile(t, dir, "notes/a.txt", "aaaa\n")
	conformance.Git(t, dir, "add", "-A")
	conformance.Git(t, dir, "commit", "-q", "-m", "a full tree")
	tr := limitedTracker(t, dir, "1")
	ctx := context.Background()
	apply := func(c tracker.Change) error {
		c.Worktree, c.Message, c.Author = true, "change", gitrepo.Writer("ui")
		_, err := tr.Apply(ctx, c)
		return err
	}
	file := func(rel string, n int) gitrepo.Change {
		return gitrepo.Change{Path: rel, Data: []byte(strings.Repeat("x", n-1) + "\n")}
	}
	head := conformance.Git(t, dir, "rev-parse", "HEAD")

	err := apply(tracker.Change{Changes: []gitrepo.Change{file("notes/new.txt", 10)}})
	var refused *tracker.RefusedError
	var full *tracker.TreeFullError
	if !errors.Is(err, tracker.ErrTreeFull) || !errors.As(err, &refused) || !errors.As(err, &full) || full.Limit != 1<<20 {
		t.Fatalf("10 bytes more in a tree past its limit: %v", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "notes/new.txt")); !errors.Is(serr, os.ErrNotExist) || conformance.Git(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("a refused change was written or committed")
	}
	steps := []struct {
		name string
		c    tracker.Change
	}{
		{"the same size", tracker.Change{Changes: []gitrepo.Change{{Path: "notes/a.txt", Data: []byte("bbbb\n")}}}},
		{"a shrink that grows a file", tracker.Change{Changes: []gitrepo.Change{{Path: "big.bin", Delete: true}, file("notes/a.txt", 1000)}}},
		{"within the limit now", tracker.Change{Changes: []gitrepo.Change{file("notes/b.txt", 2000)}}},
		{"a dream's branch", tracker.Change{Branch: "dream", Parents: []string{""}, Changes: []gitrepo.Change{file("notes/dream.txt", 2<<20)}}},
	}
	for _, s := range steps {
		if s.c.Branch != "" {
			s.c.Parents = []string{conformance.Git(t, dir, "rev-parse", "HEAD")}
			_, err = tr.Apply(ctx, tracker.Change{Branch: s.c.Branch, Parents: s.c.Parents, Changes: s.c.Changes, Message: "dream", Author: gitrepo.Writer("consolidator")})
		} else {
			err = apply(s.c)
		}
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	if err := apply(tracker.Change{Changes: []gitrepo.Change{file("notes/c.txt", 2<<20)}}); !errors.Is(err, tracker.ErrTreeFull) {
		t.Fatalf("2 MiB in a 1 MiB tree: %v", err)
	}
	used, _ := tr.TreeUsage()
	if fresh := limitedTracker(t, dir, "1"); func() int64 { u, _ := fresh.TreeUsage(); return u }() != used {
		t.Errorf("the running total %d differs from a fresh count", used)
	}
}
