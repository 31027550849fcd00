package tracker_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
)

// TestApplyIsOneWriteWithoutEcho: a prepared change (what consolidation
// hands the tracker) becomes one commit, updates the graph once per memory
// from its bytes, reloads no HEAD, is heard once by the subscribers, and
// fsnotify's report of the files it wrote commits nothing more. Run with
// -race: the watcher sees the files while Apply writes them.
func TestApplyIsOneWriteWithoutEcho(t *testing.T) {
	dir := conformance.NewRepo(t)
	var mu sync.Mutex
	heard := map[string]int{}
	tr, g := watch(t, dir, tracker.Config{Debounce: 50 * time.Millisecond, Listener: tracker.Listener{Changed: func(paths []string) {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range paths {
			heard[p]++
		}
	}}})
	before, commits := tr.Counts(), commitCount(t, dir)
	rel := "user_memory/likes-tea.md"
	h, err := tr.Apply(context.Background(), tracker.Change{
		Changes:  []gitrepo.Change{{Path: rel, Data: []byte(conformance.Memory("Likes tea", "Likes tea", "You like tea."))}},
		Message:  "consolidate: likes tea",
		Author:   gitrepo.Writer("consolidator"),
		Worktree: true,
	})
	if err != nil || h == "" {
		t.Fatalf("Apply: %q, %v", h, err)
	}
	// Let fsnotify deliver its reports and the debounce pass.
	time.Sleep(300 * time.Millisecond)
	settle(t, tr)
	after := tr.Counts()
	if d := after.GraphWrites - before.GraphWrites; d != 1 {
		t.Errorf("graph updated %d times for one memory, want 1", d)
	}
	if d := after.HeadReloads - before.HeadReloads; d != 0 {
		t.Errorf("HEAD reloaded %d times after the tracker's own commit, want 0", d)
	}
	if got := commitCount(t, dir); got != commits+1 {
		t.Errorf("%d commits, want %d", got, commits+1)
	}
	mu.Lock()
	if heard[rel] != 1 {
		t.Errorf("subscribers heard %s %d times, want 1", rel, heard[rel])
	}
	mu.Unlock()
	if g.Get(rel) == nil {
		t.Errorf("graph lacks %s", rel)
	}
	conformance.CheckRepo(t, dir)
}

// TestApplyMergeAndBranch: a dream commits on a branch of its own (HEAD,
// graph and work tree untouched), then merges back as a Change with two
// parents; a merge computed on a HEAD that moved since is refused.
func TestApplyMergeAndBranch(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, g, r := open(t, dir, tracker.Config{})
	ctx := context.Background()
	base, _ := r.Head()
	rel := "user_memory/dreamt.md"
	data := []byte(conformance.Memory("Dreamt", "Dreamt", "You dreamt."))
	tip, err := tr.Apply(ctx, tracker.Change{Branch: "dream", Parents: []string{base}, Message: "dream", Author: gitrepo.Writer("consolidator"),
		Changes: []gitrepo.Change{{Path: rel, Data: data}}})
	if err != nil || tip == "" {
		t.Fatalf("dream commit: %q, %v", tip, err)
	}
	if h, _ := r.Head(); h != base || g.Get(rel) != nil {
		t.Fatalf("a branch commit moved HEAD (%s) or reached the graph", h)
	}
	conformance.WriteFile(t, dir, "user_memory/meanwhile.md", conformance.Memory("Meanwhile", "Meanwhile", "Meanwhile."))
	tr.Touch("user_memory/meanwhile.md", "vim")
	// Apply commits what is pending first: a merge planned on base is
	// then stale.
	_, err = tr.Apply(ctx, tracker.Change{Parents: []string{base, tip}, Message: "merge dream", Author: gitrepo.Writer("consolidator"),
		Changes: []gitrepo.Change{{Path: rel, Data: data}}, Worktree: true, Clean: true})
	if !errors.Is(err, gitrepo.ErrRefMoved) {
		t.Fatalf("stale merge: %v, want ErrRefMoved", err)
	}
	head, _ := r.Head()
	m, err := tr.Apply(ctx, tracker.Change{Parents: []string{head, tip}, Message: "merge dream", Author: gitrepo.Writer("consolidator"),
		Changes: []gitrepo.Change{{Path: rel, Data: data}}, Worktree: true, Clean: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(t, dir, "git log -1 --format=%P "+m); got != head+" "+tip {
		t.Fatalf("merge parents %q", got)
	}
	if g.Get(rel) == nil {
		t.Fatal("the merged memory is not in the graph")
	}
	if !slices.Contains(g.Paths(), "user_memory/meanwhile.md") {
		t.Fatal("the pending edit committed before the merge is not in the graph")
	}
	conformance.CheckRepo(t, dir)
}

// TestApplyDeletesABranch: a Change with DeleteBranch removes a dream's
// branch through the tracker and through Alone alike (git then lists no
// such branch), leaves HEAD, the graph and the work tree alone, and is
// refused when the branch moved since the caller read it.
func TestApplyDeletesABranch(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, g, r := open(t, dir, tracker.Config{})
	ctx := context.Background()
	base, _ := r.Head()
	paths := len(g.Paths())
	for _, w := range []tracker.Writer{tr, tracker.Alone{Repo: r}} {
		tip, err := w.Apply(ctx, tracker.Change{Branch: "mindmount/dream/1", Parents: []string{base}, Message: "dream", Author: gitrepo.Writer("consolidator"),
			Changes: []gitrepo.Change{{Path: "user_memory/dreamt.md", Data: []byte(conformance.Memory("Dreamt", "Dreamt", "You dreamt."))}}})
		if err != nil || tip == "" {
			t.Fatalf("%T: dream commit: %q, %v", w, tip, err)
		}
		if _, err := w.Apply(ctx, tracker.Change{Branch: "mindmount/dream/1", DeleteBranch: true, Parents: []string{base}}); !errors.Is(err, gitrepo.ErrRefMoved) {
			t.Fatalf("%T: deleting a branch that moved since: %v, want ErrRefMoved", w, err)
		}
		if h, err := w.Apply(ctx, tracker.Change{Branch: "mindmount/dream/1", DeleteBranch: true, Parents: []string{tip}}); err != nil || h != "" {
			t.Fatalf("%T: delete: %q, %v", w, h, err)
		}
		if got := sh(t, dir, "git branch -a --list 'mindmount/*'"); got != "" {
			t.Fatalf("%T: git still lists %s", w, got)
		}
		if h, _ := r.Head(); h != base || len(g.Paths()) != paths {
			t.Fatalf("%T: deleting a branch moved HEAD (%s) or changed the graph", w, h)
		}
	}
	conformance.CheckRepo(t, dir)
}
