package tracker

import (
	"errors"
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
	sum := fingerprint(data)
	t.graphMu.Lock()
	defer t.graphMu.Unlock()
	if t.graphSums[rel] == sum {
		return
	}
	t.graphSums[rel] = sum
	t.graphWrites.Add(1)
	t.g.Put(rel, data)
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
	data, err := t.r.Tree().ReadFile(rel, maxPlainFile)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, subtree.ErrUnsafePath), errors.Is(err, syscall.ENOTDIR):
		t.removeMem(rel)
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
