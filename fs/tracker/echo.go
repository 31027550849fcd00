package tracker

import (
	"io/fs"
	"sync"
	"time"

	"github.com/mindmount/mindmount/memgraph/subtree"
)

// echoWindow is how long after the tracker wrote a file itself fsnotify's
// report of it is taken for an echo: the report arrives within
// milliseconds.
const echoWindow = 5 * time.Second

// echoes remembers the files the tracker wrote into the work tree itself
// (an Apply with Worktree, a Write) and how each looked right after, so
// that fsnotify's report of them is dropped instead of being read, judged
// and found equal to HEAD a debounce later. A report whose file no longer
// looks as the tracker left it (size, modification time, mode) is an edit
// made since, and is handled as any other.
//
// The tracker writes while the watcher runs, so a report may arrive before
// the file is marked: paths are expected before the write, and a report of
// an expected path is held until the write is marked, then dropped or
// handled.
type echoes struct {
	mu       sync.Mutex
	at       map[string]echoMark
	sweep    time.Time
	expected map[string]int  // paths being written by the tracker now
	held     map[string]bool // reports of expected paths, waiting for settle
}

type echoMark struct {
	at time.Time
	fi fs.FileInfo // nil: no file after the change
}

// expect says that the tracker is about to write rels.
func (e *echoes) expect(rels []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.expected == nil {
		e.expected, e.held = map[string]int{}, map[string]bool{}
	}
	for _, rel := range rels {
		e.expected[rel]++
	}
}

// settle ends the write of rels that expect announced: when written, how
// they look now is marked. It returns the reports held meanwhile that were
// not echoes after all (or all of them when nothing was written): those
// paths must be touched.
func (e *echoes) settle(tree *subtree.Tree, rels []string, written bool) []string {
	if written {
		e.mark(tree, rels)
	}
	e.mu.Lock()
	var held []string
	for _, rel := range rels {
		if e.expected[rel]--; e.expected[rel] <= 0 {
			delete(e.expected, rel)
			if e.held[rel] {
				delete(e.held, rel)
				held = append(held, rel)
			}
		}
	}
	e.mu.Unlock()
	var touch []string
	for _, rel := range held {
		if !written || !e.ours(tree, rel) {
			touch = append(touch, rel)
		}
	}
	return touch
}

// report decides what a report of rel from fsnotify is: an echo to drop,
// one to hold until the tracker's write of it settles, or neither.
func (e *echoes) report(tree *subtree.Tree, rel string) (drop bool) {
	e.mu.Lock()
	if e.expected[rel] > 0 {
		e.held[rel] = true
		e.mu.Unlock()
		return true
	}
	e.mu.Unlock()
	return e.ours(tree, rel)
}

// mark records how rels look now.
func (e *echoes) mark(tree *subtree.Tree, rels []string) {
	now := time.Now()
	marks := make(map[string]echoMark, len(rels))
	for _, rel := range rels {
		fi, err := tree.Lstat(rel)
		if err != nil {
			fi = nil
		}
		marks[rel] = echoMark{at: now, fi: fi}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.at == nil {
		e.at = map[string]echoMark{}
	}
	for rel, m := range marks {
		e.at[rel] = m
	}
	if now.Sub(e.sweep) > echoWindow {
		e.sweep = now
		for rel, m := range e.at {
			if now.Sub(m.at) > echoWindow {
				delete(e.at, rel)
			}
		}
	}
}

// ours reports whether rel is as the tracker left it a moment ago.
func (e *echoes) ours(tree *subtree.Tree, rel string) bool {
	e.mu.Lock()
	m, ok := e.at[rel]
	e.mu.Unlock()
	if !ok || time.Since(m.at) > echoWindow {
		return false
	}
	fi, err := tree.Lstat(rel)
	if err != nil {
		return m.fi == nil
	}
	// Size, nanosecond modification time and mode tell one version of a
	// file from the next (a write in the same nanosecond that keeps the
	// size is not one a person or an agent makes).
	return m.fi != nil && fi.Size() == m.fi.Size() && fi.ModTime().Equal(m.fi.ModTime()) && fi.Mode() == m.fi.Mode()
}
