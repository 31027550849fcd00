package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
	"github.com/mindmount/mindmount/memgraph/subtree"
)

// memoryWith is teaMemory whose fact is fact.
func memoryWith(fact string) string {
	return strings.Replace(teaMemory, "You like tea.", fact, 1)
}

// waitGraph waits until ok says the graph is what the test waits for;
// only a hang (a minute) fails.
func waitGraph(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("a minute waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFollowTeam: a team's graph follows what its writer does to the
// team's working tree while a member's worker runs: a new memory, one in
// a new folder (written before the folder's watch can exist), a change
// and a removal are each seen by the graph and its recall, the listener
// hears the paths, and stopping ends the goroutine (go test -race).
func TestFollowTeam(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "eng")
	runCmd(t, "init", dir)
	g, err := memgraph.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var mu sync.Mutex
	var heard []string
	stop, err := followTeam("eng", g, func(rels []string) {
		mu.Lock()
		heard = append(heard, rels...)
		mu.Unlock()
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	found := func(word string) func() bool {
		return func() bool {
			for _, h := range g.Recall(word, recall.Options{K: 5}) {
				if m := g.Get(h.Path); m != nil && strings.Contains(string(m.Render()), word) {
					return true
				}
			}
			return false
		}
	}
	write := func(rel, fact string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(memoryWith(fact)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("user_memory/new-one.md", "The build runs on Fridays zebrafinch.")
	waitGraph(t, "a new memory", found("zebrafinch"))
	write("user_memory/deploys/rollback.md", "Rollbacks need two reviewers quokka.")
	waitGraph(t, "a memory in a new folder", found("quokka"))
	write("user_memory/new-one.md", "The build runs on Mondays narwhal.")
	waitGraph(t, "a changed memory", func() bool { return found("narwhal")() && !found("zebrafinch")() })
	os.RemoveAll(filepath.Join(dir, "user_memory/deploys"))
	waitGraph(t, "a removed folder", func() bool { return g.Get("user_memory/deploys/rollback.md") == nil })
	mu.Lock()
	ok := slices.Contains(heard, "user_memory/new-one.md")
	mu.Unlock()
	if !ok {
		t.Fatalf("the listener did not hear the new memory: %q", heard)
	}
}

// TestFollowTeamIgnoresHidden: what the graph never reads (.git, the
// inbox) is not followed.
func TestFollowTeamIgnoresHidden(t *testing.T) {
	for rel, want := range map[string]bool{
		".git": true, ".git/refs/heads": true, ".mindmount/cache": true, "transcripts": true, "transcripts/a.jsonl": true,
		"user_memory/.hidden/x.md": true, "user_memory": false, "user_memory/x.md": false, "system/persona.md": false, "transcriptsx": false,
	} {
		if got := unwatched(rel); got != want {
			t.Errorf("unwatched(%q) = %v, want %v", rel, got, want)
		}
	}
}

// TestFollowTeamRescan: after lost events (the watcher's queue
// overflowed) the follower reads every top-level entry again, on disk or
// in the graph: a memory written and a folder removed while nothing was
// heard are both caught up.
func TestFollowTeamRescan(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "eng")
	runCmd(t, "init", dir)
	os.WriteFile(filepath.Join(dir, "character_memory/gone.md"), []byte(memoryWith("Gone soon wombat.")), 0o644)
	g, err := memgraph.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.Get("character_memory/gone.md") == nil {
		t.Fatal("the scan missed the memory to remove")
	}
	tree, err := subtree.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// A follower that heard nothing: its events were lost.
	f := &teamFollower{name: "eng", g: g, tree: tree, w: w, dirs: map[string]bool{}, pending: map[string]bool{}, rescan: true,
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	os.RemoveAll(filepath.Join(dir, "character_memory")) // a whole top-level folder: only the graph still names it
	os.MkdirAll(filepath.Join(dir, "user_memory/new"), 0o755)
	os.WriteFile(filepath.Join(dir, "user_memory/new/ops.md"), []byte(memoryWith("Pager rota ocelot.")), 0o644)
	f.apply()
	if g.Get("character_memory/gone.md") != nil {
		t.Error("a top-level folder removed while events were lost is still in the graph")
	}
	if g.Get("user_memory/new/ops.md") == nil {
		t.Error("a memory written while events were lost is not in the graph")
	}
	if !f.dirs["user_memory"] {
		t.Error("the rescan did not watch the tree again")
	}
}
