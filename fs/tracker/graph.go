package tracker

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/subtree"
)

// The tracker is the one writer of the graph: every update goes through
// putMem or removeMem, which remember what they gave the graph per path,
// so a content the graph already holds from the tracker is not given again
// (the mount's Refresh ahead of a commit, then the commit itself).

// putMem gives the graph rel's content data, unless it already has it.
func (t *Tracker) putMem(rel string, data []byte) {
	t.giveGraph(rel, fingerprint(data), func() { t.g.Put(rel, data) })
}

// giveGraph runs give (a Put of rel) unless the graph already holds the
// content whose fingerprint is sum.
func (t *Tracker) giveGraph(rel, sum string, give func()) {
	t.graphMu.Lock()
	defer t.graphMu.Unlock()
	if t.graphSums[rel] == sum {
		return
	}
	t.graphSums[rel] = sum
	t.graphWrites.Add(1)
	give()
}

// tooLargeMem tells the graph that rel is tooLarge bytes, more than the
// size rule allows, without its content (memgraph.Graph.PutTooLarge),
// unless it knows already.
func (t *Tracker) tooLargeMem(rel string, tooLarge int64) {
	t.giveGraph(rel, contentSum(nil, tooLarge), func() { t.g.PutTooLarge(rel, tooLarge) })
}

// removeMem drops rel from the graph, unless it is gone already.
func (t *Tracker) removeMem(rel string) {
	t.graphMu.Lock()
	defer t.graphMu.Unlock()
	if s, ok := t.graphSums[rel]; ok && s == "" {
		return
	}
	t.graphSums[rel] = ""
	t.graphWrites.Add(1)
	t.g.Remove(rel)
}

// renameMem moves rel's entry to its new name with the content data.
func (t *Tracker) renameMem(from, to string, data []byte) {
	t.graphMu.Lock()
	t.graphSums[from] = ""
	t.graphSums[to] = fingerprint(data)
	t.graphWrites.Add(1)
	t.g.Rename(from, to)
	t.g.Put(to, data)
	t.graphMu.Unlock()
}

// Refresh brings the graph in step with the files at rels as they are on
// disk now, ahead of their commit, so that what the mount synthesizes
// right after a write (the indexes, CONTEXT.md) reflects it. It is the
// mount's only way to the graph: the commit that follows finds the graph
// holding the content already and updates nothing. Paths that are not
// memories are ignored. Safe to call from a request handler: it never
// waits for a commit.
func (t *Tracker) Refresh(rels ...string) {
	for _, rel := range rels {
		t.refreshPath(rel)
	}
}

// refreshPath reads one path into the graph (see Refresh).
func (t *Tracker) refreshPath(rel string) {
	if !memgraph.IsMemoryPath(rel) {
		return
	}
	data, tooLarge, err := readBounded(t.r.Tree(), rel)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, subtree.ErrUnsafePath), errors.Is(err, syscall.ENOTDIR):
		t.removeMem(rel)
	case err == nil && tooLarge > 0:
		t.tooLargeMem(rel, tooLarge)
	case errors.Is(err, subtree.ErrNotRegular):
		// A folder with a memory's name: the graph walks it.
		t.graphWrites.Add(1)
		if err := t.g.Update(rel); err != nil {
			t.log.Debug("graph update", "path", safePath(rel), "err", err)
		}
		t.graphMu.Lock()
		clear(t.graphSums) // the walk put what it found
		t.graphMu.Unlock()
	case err != nil:
		t.log.Debug("graph update", "path", safePath(rel), "err", err)
	default:
		t.putMem(rel, data)
	}
}

// readLimit is the most the tracker reads of rel: the size rule's limit
// for the files that rule covers (memgraph.SizeLimit: memories, skills,
// the settings file), MaxFile for any other file.
func readLimit(rel string) int64 {
	if l := memgraph.SizeLimit(rel); l > 0 {
		return l
	}
	return MaxFile
}

// readBounded reads rel whole within readLimit. A larger file is never
// read: tooLarge is its size (from a stat) and data is nil, for the gate
// and the graph to refuse it by its size alone; a 60 MB file in a
// memory folder costs a stat, not 60 MB of the worker's memory.
func readBounded(tree *subtree.Tree, rel string) (data []byte, tooLarge int64, err error) {
	limit := readLimit(rel)
	data, err = tree.ReadFile(rel, limit)
	if !errors.Is(err, subtree.ErrTooLarge) {
		return data, 0, err
	}
	fi, serr := tree.Lstat(rel)
	switch {
	case serr != nil:
		return nil, 0, serr
	case !fi.Mode().IsRegular() || fi.Size() <= limit:
		return nil, 0, err // replaced while we looked: judged at its own event
	}
	return nil, fi.Size(), nil
}

// contentSum is the fingerprint of a file as the tracker last read it: of
// its content, or of its size when it was too large to read.
func contentSum(data []byte, tooLarge int64) string {
	if tooLarge > 0 {
		return fmt.Sprintf("too-large-%d", tooLarge)
	}
	return fingerprint(data)
}
