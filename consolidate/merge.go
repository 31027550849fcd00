package consolidate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// The cursor floor: what every cursor in HEAD's history consumed.
//
// "git revert" of the latest consolidation never reaches the cursor merge
// driver (hooks.MergeFile's cursor rule): HEAD's cursor equals the reverted commit's,
// so git takes the older cursor as it is, and a reader of HEAD alone would
// consolidate the reverted messages again and bring the memory back. So
// the cursor is read with a floor: every position a cursor reachable from
// HEAD ever held, kept in the git directory (local state, not history) and
// brought up to date from the commits made since it was last read. A
// revert of any consolidation, the newest or an old one, undoes it for good.
const floorFile = "mindmount/cursor-floor.json"

// maxFloorWalk bounds the commits one read inspects; a longer unseen history
// (a fresh clone of a long-lived repository) is caught up over later reads.
const maxFloorWalk = 20000

// maxFloorEntries bounds the positions kept per transcript (the furthest
// ones); several exist only when a transcript was rewritten.
const maxFloorEntries = 16

type floorState struct {
	Head        string                   `json:"head"` // the commit the floor was brought up to
	Transcripts map[string][]CursorEntry `json:"transcripts"`
}

var floorMu sync.Mutex // serializes floor file updates within the process

// loadCursor parses HEAD's cursor (headData) and attaches its floor.
// Failing to read history is not fatal: the cursor is still the truth it
// was before the floor existed.
func loadCursor(r *gitrepo.Repo, headData []byte) (*Cursor, error) {
	c, err := ParseCursor(headData)
	if err != nil {
		return nil, err
	}
	head, err := r.Head()
	if err != nil || head == "" {
		return c, nil
	}
	floorMu.Lock()
	defer floorMu.Unlock()
	p := filepath.Join(r.GitDir(), filepath.FromSlash(floorFile))
	st := readFloor(p)
	changed := false
	if st.Head != head {
		if err := catchUp(r.Dir(), head, st); err == nil {
			st.Head, changed = head, true
		}
	}
	for rel, e := range c.Transcripts {
		changed = addFloor(st, rel, e) || changed
	}
	if changed {
		writeFloor(p, st)
	}
	c.floor = st.Transcripts
	return c, nil
}

func readFloor(p string) *floorState {
	st := &floorState{}
	if b, err := os.ReadFile(p); err == nil {
		if json.Unmarshal(b, st) != nil {
			st = &floorState{} // rebuilt from history below
		}
	}
	if st.Transcripts == nil {
		st.Transcripts = map[string][]CursorEntry{}
	}
	return st
}

// writeFloor replaces the floor file atomically; a failure only costs a
// history walk on the next read.
func writeFloor(p string, st *floorState) {
	b, err := json.Marshal(st)
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	atomicfile.WriteFile(p, b, 0o600)
}

// addFloor records e for rel and reports whether the floor changed.
func addFloor(st *floorState, rel string, e CursorEntry) bool {
	if e.Messages <= 0 {
		return false
	}
	list := st.Transcripts[rel]
	for _, o := range list {
		if o == e {
			return false
		}
	}
	list = append(list, e)
	sort.Slice(list, func(i, j int) bool { return list[i].Messages > list[j].Messages })
	if len(list) > maxFloorEntries {
		list = list[:maxFloorEntries]
	}
	st.Transcripts[rel] = list
	return true
}

// catchUp adds the cursors of the commits reachable from head that were not
// seen yet: the walk stops at the commit the floor was last brought up to.
func catchUp(dir, head string, st *floorState) error {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return err
	}
	stop := plumbing.NewHash(st.Head)
	seen := map[plumbing.Hash]bool{}
	blobs := map[plumbing.Hash]bool{}
	queue := []plumbing.Hash{plumbing.NewHash(head)}
	for len(queue) > 0 && len(seen) < maxFloorWalk {
		id := queue[0]
		queue = queue[1:]
		if seen[id] {
			continue
		}
		seen[id] = true
		cm, err := repo.CommitObject(id)
		if err != nil {
			return err
		}
		if err := addCommitCursor(repo, cm, st, blobs); err != nil {
			return err
		}
		if id == stop {
			continue
		}
		queue = append(queue, cm.ParentHashes...)
	}
	// A history longer than one walk keeps what the walk found: the
	// oldest commits' cursors are below the newer ones' anyway.
	return nil
}

func addCommitCursor(repo *git.Repository, cm *object.Commit, st *floorState, blobs map[plumbing.Hash]bool) error {
	tree, err := cm.Tree()
	if err != nil {
		return err
	}
	ent, err := tree.FindEntry(CursorFile)
	if err != nil || blobs[ent.Hash] {
		return nil // no cursor in this commit, or one already read
	}
	blobs[ent.Hash] = true
	blob, err := repo.BlobObject(ent.Hash)
	if err != nil {
		return err
	}
	rd, err := blob.Reader()
	if err != nil {
		return err
	}
	defer rd.Close()
	var old Cursor
	if json.NewDecoder(rd).Decode(&old) != nil {
		return nil // a broken historic cursor adds nothing
	}
	for rel, e := range old.Transcripts {
		addFloor(st, rel, e)
	}
	return nil
}
