package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/subtree"
)

// A serve member's worker is not its teams' writer: a team's writer (its
// own worker, or git as the team's uid) commits into the team's working
// tree, and every member's worker reads that tree through its team
// group. A teamFollower keeps one team's graph (the shared/<team>/
// indexes, .mindmount/search, recall, the team sections of CONTEXT.md) in
// step with that tree while the worker runs: inotify on the tree's
// folders, which the team's group may read (mode g+rx), and after a short
// quiet the changed paths are read again through the graph's own entry
// point (memgraph.Graph.Update: a file re-read or forgotten, a folder
// walked), the same one the tracker's refresh ends in. What the graph
// holds is then what the member's mount shows: both read the same tree.
// Only folders are watched, never .git: the tree is what is projected.

// Debounce of a team's refresh: a burst of changes (a commit's files, a
// checkout) is read once it has been quiet for followQuiet, and never
// later than followMaxWait after its first change.
const (
	followQuiet   = 50 * time.Millisecond
	followMaxWait = 500 * time.Millisecond
)

// teamFollower watches one team's working tree for its graph.
type teamFollower struct {
	name    string
	g       *memgraph.Graph
	tree    *subtree.Tree
	w       *fsnotify.Watcher
	dirs    map[string]bool // watched folders, tree-relative ("" = the root)
	changed func([]string)  // told the paths read again (the mount drops its caches); may be nil
	log     *slog.Logger

	pending map[string]bool
	rescan  bool // events were lost: read every top-level entry again
}

// followTeam starts following the team whose graph is g and returns the
// function that stops it (and waits for it). changed hears the paths of
// each refresh after the graph has them.
func followTeam(name string, g *memgraph.Graph, changed func([]string), log *slog.Logger) (func(), error) {
	tree, err := subtree.Open(g.Root())
	if err != nil {
		return nil, err
	}
	w, err := fsnotify.NewBufferedWatcher(1024)
	if err != nil {
		tree.Close()
		return nil, fmt.Errorf("team %s: start file watcher: %w", name, err)
	}
	f := &teamFollower{name: name, g: g, tree: tree, w: w, dirs: map[string]bool{}, changed: changed,
		log: log.With("team", name), pending: map[string]bool{}}
	if err := f.watchTree(""); err != nil {
		w.Close()
		tree.Close()
		return nil, fmt.Errorf("team %s: watch: %w", name, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.run(ctx)
	}()
	return func() {
		cancel()
		<-done
		w.Close()
		tree.Close()
	}, nil
}

// unwatched reports whether rel is no concern of the graph: a hidden
// path (.git, .mindmount) or the inbox (transcripts/, the team's alone).
func unwatched(rel string) bool {
	if rel == memgraph.TranscriptsDir || strings.HasPrefix(rel, memgraph.TranscriptsDir+"/") {
		return true
	}
	for _, part := range strings.Split(rel, "/") {
		if strings.HasPrefix(part, ".") {
			return true
		}
	}
	return false
}

// watchTree watches folder rel and every folder below it, walking beneath
// the tree's descriptor (no symlink followed).
func (f *teamFollower) watchTree(rel string) error {
	start := rel
	if start == "" {
		start = "."
	}
	return f.tree.WalkDir(start, func(r string, d fs.DirEntry, err error) error {
		if r == "." {
			r = ""
		}
		switch {
		case err != nil && r == rel && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, subtree.ErrUnsafePath):
			return err
		case err != nil:
			return nil // gone while we walked: its events say so
		case !d.IsDir():
			return nil
		case r != "" && unwatched(r):
			return fs.SkipDir
		}
		if err := f.w.Add(filepath.Join(f.tree.Dir(), filepath.FromSlash(r))); err != nil {
			f.log.Warn("team folder not followed; its changes show after a restart", "dir", memgraph.SafeLine(r), "err", err)
			return nil
		}
		f.dirs[r] = true
		return nil
	})
}

// run handles the watcher's events until ctx ends, reading each quiet
// burst into the graph.
func (f *teamFollower) run(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var first time.Time
	arm := func() {
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		timer.Reset(min(followQuiet, max(0, first.Add(followMaxWait).Sub(now))))
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-f.w.Events:
			if !ok {
				return
			}
			if f.note(ev) {
				arm()
			}
		case err, ok := <-f.w.Errors:
			if !ok {
				return
			}
			f.log.Warn("team file watcher lost events; reading the team again", "err", err)
			f.rescan = true
			arm()
		case <-timer.C:
			f.apply()
			first = time.Time{}
		}
	}
}

// note records one event; it reports whether the graph may need it.
func (f *teamFollower) note(ev fsnotify.Event) bool {
	rel, err := filepath.Rel(f.tree.Dir(), ev.Name)
	rel = filepath.ToSlash(rel)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || unwatched(rel) {
		return false
	}
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		f.unwatch(rel)
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := f.tree.Lstat(rel); err == nil && fi.IsDir() {
			if err := f.watchTree(rel); err != nil {
				f.log.Warn("new team folder not followed", "dir", memgraph.SafeLine(rel), "err", err)
			}
		}
	}
	f.pending[rel] = true
	return true
}

// unwatch forgets rel and the folders below it (gone or moved away; the
// kernel dropped their watches already, or will).
func (f *teamFollower) unwatch(rel string) {
	for d := range f.dirs {
		if d == rel || strings.HasPrefix(d, rel+"/") {
			delete(f.dirs, d)
			f.w.Remove(filepath.Join(f.tree.Dir(), filepath.FromSlash(d)))
		}
	}
}

// apply reads the pending paths into the graph (after lost events: every
// top-level entry, on disk or in the graph) and tells changed.
func (f *teamFollower) apply() {
	if f.rescan {
		f.rescan = false
		if err := f.watchTree(""); err != nil {
			f.log.Warn("team not followed again", "err", err)
		}
		for _, r := range f.topLevel() {
			f.pending[r] = true
		}
	}
	rels := make([]string, 0, len(f.pending))
	for rel := range f.pending {
		if err := f.g.Update(rel); err != nil {
			f.log.Debug("team graph update", "path", memgraph.SafeLine(rel), "err", err)
		}
		rels = append(rels, rel)
	}
	clear(f.pending)
	if f.changed != nil && len(rels) > 0 {
		f.changed(rels)
	}
}

// topLevel lists the tree's top-level entries and those the graph holds
// memories under, so that a rescan also forgets what vanished.
func (f *teamFollower) topLevel() []string {
	seen := map[string]bool{}
	if ents, err := f.tree.ReadDir("."); err == nil {
		for _, e := range ents {
			seen[e.Name()] = true
		}
	}
	for _, p := range f.g.Paths() {
		top, _, _ := strings.Cut(p, "/")
		seen[top] = true
	}
	var out []string
	for r := range seen {
		if !unwatched(r) {
			out = append(out, r)
		}
	}
	return out
}
