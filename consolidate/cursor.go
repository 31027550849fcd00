package consolidate

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mindmount/mindmount/memgraph"
)

// CursorFile is where the consolidation cursor lives. It is committed in the
// same commit as the memory changes it accounts for, so a crash can neither
// lose nor repeat a consolidation; no door writes it (tracker.ErrCursor).
const CursorFile = memgraph.CursorFile

// Cursor records, per transcript, how many messages have been consolidated
// and a hash of that prefix.
type Cursor struct {
	Version     int                    `json:"version"`
	Transcripts map[string]CursorEntry `json:"transcripts"`
	// Last describes the run that wrote this cursor: which memory files it
	// changed and its commit message. Recovery uses it to finish a run whose
	// files reached the worktree but whose commit did not happen.
	Last *LastRun `json:"last,omitempty"`
	// Dreams is the highest number of a rejected or approved dream
	// (review.go): its branch is deleted, and the number must not come
	// back for another proposal, or a second "review reject N" meant for
	// the first would drop the new one. Dreams merged automatically and
	// waiting dreams keep their branches.
	Dreams int `json:"dreams,omitempty"`

	// floor holds positions earlier commits' cursors reached (merge.go):
	// a "git revert" of the latest consolidation puts the old cursor file
	// back, and Start must not replay what that consolidation consumed.
	floor map[string][]CursorEntry
}

// CursorEntry is one transcript's position.
type CursorEntry struct {
	Messages int    `json:"messages"` // messages consumed, counting every role
	Hash     string `json:"hash"`     // PrefixHash of those messages
}

// LastRun is the provenance of the commit that wrote the cursor.
type LastRun struct {
	Message string   `json:"message"`
	Files   []string `json:"files"`
}

// ParseCursor reads a cursor file; empty or missing data is an empty cursor.
func ParseCursor(data []byte) (*Cursor, error) {
	c := &Cursor{Version: 1, Transcripts: map[string]CursorEntry{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return c, nil
	}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("%s: %v", CursorFile, err)
	}
	if c.Transcripts == nil {
		c.Transcripts = map[string]CursorEntry{}
	}
	for p, e := range c.Transcripts {
		if e.Messages < 0 {
			return nil, fmt.Errorf("%s: %s has a negative message count", CursorFile, p)
		}
	}
	return c, nil
}

// Render returns the file bytes: indented JSON with sorted keys, so the
// diff of a cursor advance is one or two lines.
func (c *Cursor) Render() []byte {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil { // only maps of strings and ints: cannot happen
		return nil
	}
	return append(b, '\n')
}

// Clone returns a deep copy, so a run can advance its own copy and discard
// it on failure.
func (c *Cursor) Clone() *Cursor {
	n := &Cursor{Version: c.Version, Transcripts: make(map[string]CursorEntry, len(c.Transcripts)), Dreams: c.Dreams}
	for k, v := range c.Transcripts {
		n.Transcripts[k] = v
	}
	if c.Last != nil {
		l := *c.Last
		l.Files = append([]string(nil), c.Last.Files...)
		n.Last = &l
	}
	n.floor = c.floor // never changed after loading: shared
	return n
}

// Merge takes o's position for every transcript where it is further than
// c's: positions only move forward. This is the rule of the cursor merge
// driver (hooks.MergeFile's cursor rule) and of the floor. c keeps its Last, or takes
// o's when it has none, and the higher dream number. When both stopped at the same count with different
// hashes (the transcript was rewritten on one side), c's wins.
func (c *Cursor) Merge(o *Cursor) {
	for rel, te := range o.Transcripts {
		if ce, ok := c.Transcripts[rel]; !ok || te.Messages > ce.Messages {
			c.Transcripts[rel] = te
		}
	}
	if c.Last == nil {
		c.Last = o.Last
	}
	c.Dreams = max(c.Dreams, o.Dreams)
}

// Start returns the index of the first message not yet consolidated in t:
// the furthest position, of the cursor's own and the floor's, whose hash
// still matches t's prefix. When no recorded position matches, the
// transcript was rewritten: it is consolidated again from the start (the
// decision step recognises facts already remembered), and rewritten is
// true.
func (c *Cursor) Start(t *Transcript) (start int, rewritten bool) {
	cands := c.floor[t.Path]
	if e, ok := c.Transcripts[t.Path]; ok {
		cands = append([]CursorEntry{e}, cands...)
	}
	best, seen := -1, false
	for _, e := range cands {
		if e.Messages == 0 {
			continue
		}
		seen = true
		if e.Messages > best && e.Messages <= len(t.Messages) && PrefixHash(t.Messages, e.Messages) == e.Hash {
			best = e.Messages
		}
	}
	switch {
	case best >= 0:
		return best, false
	case seen:
		return 0, true
	}
	return 0, false
}

// Advance records that t's first n messages are consolidated.
func (c *Cursor) Advance(t *Transcript, n int) {
	c.Transcripts[t.Path] = CursorEntry{Messages: n, Hash: PrefixHash(t.Messages, n)}
}
