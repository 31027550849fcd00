package tracker

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
)

// Status renders the human-readable report served as .mindmount/status: files
// kept out of git and why (path:line: message), changes waiting for the
// debounce, the last commit, and extra lines such as consolidation's state.
func (t *Tracker) Status() []byte {
	var b strings.Builder
	t.writeProblems(&b)
	t.writePending(&b)
	if ci, err := t.lastCommit(); err == nil && ci.Hash != "" {
		fmt.Fprintf(&b, "last commit: %s %s\n  by %s at %s\n", gitrepo.ShortHash(ci.Hash), ci.Subject, ci.Author.Name, ci.When.Format(time.RFC3339))
	} else {
		b.WriteString("last commit: none\n")
	}
	if extra := t.cfg.Listener.Status; extra != nil {
		if s := strings.TrimRight(extra(), "\n"); s != "" {
			b.WriteString(s + "\n")
		}
	}
	return []byte(b.String())
}

// writeProblems writes Status's invalid files.
func (t *Tracker) writeProblems(b *strings.Builder) {
	// A file written again since it was found invalid is checked anew at
	// the next commit; until then its old findings are stale (the indexes
	// already read the new text), so only the graph's current reading of it
	// below is reported, and the file shows under pending changes.
	t.mu.Lock()
	rewritten := make(map[string]bool, len(t.pending))
	for p := range t.pending {
		rewritten[p] = true
	}
	t.mu.Unlock()
	var probs []memgraph.Problem
	for _, p := range t.Invalid() {
		if !rewritten[p.Path] {
			probs = append(probs, p)
		}
	}
	seen := map[string]bool{}
	for _, p := range probs {
		seen[p.String()] = true
	}
	// The graph also knows files that were invalid when scanned (committed
	// by git directly, or present before we started).
	for _, p := range t.g.Problems() {
		if !seen[p.String()] {
			seen[p.String()] = true
			probs = append(probs, p)
		}
	}
	if len(probs) == 0 {
		b.WriteString("invalid files: none\n")
	} else {
		fmt.Fprintf(b, "invalid files (%d %s; kept on disk, not committed until fixed):\n", len(probs), memgraph.Plural(len(probs), "problem", "problems"))
		for _, p := range probs {
			fmt.Fprintf(b, "  %s\n", p.String())
		}
	}
}

// writePending writes Status's pending and uncommitted changes, and why
// commits wait or failed.
func (t *Tracker) writePending(b *strings.Builder) {
	t.mu.Lock()
	pending := slices.Sorted(maps.Keys(t.pending))
	ids := make([]string, len(pending))
	for i, p := range pending {
		ids[i] = t.pending[p]
	}
	first, last := t.first, t.last
	uncommitted := t.uncommitted
	lastErr, paused := t.lastErr, t.paused
	t.mu.Unlock()

	if len(pending) == 0 {
		b.WriteString("pending changes: none\n")
	} else {
		due := last.Add(t.cfg.Debounce)
		if lim := first.Add(t.cfg.MaxWait); lim.Before(due) {
			due = lim
		}
		wait := time.Until(due).Round(100 * time.Millisecond)
		if wait < 0 {
			wait = 0
		}
		fmt.Fprintf(b, "pending changes (%d, commit in about %s):\n", len(pending), wait)
		for i, p := range pending {
			id := ids[i]
			if id == "" {
				id = outsideIdentity
			}
			fmt.Fprintf(b, "  %s (%s)\n", p, id)
		}
	}
	if len(uncommitted) > 0 {
		fmt.Fprintf(b, "uncommitted changes (%d; committed when mindmount mount or watch starts):\n", len(uncommitted))
		for _, e := range uncommitted {
			fmt.Fprintf(b, "  %s\n", e.line())
		}
	}
	if paused != "" && len(pending) > 0 {
		fmt.Fprintf(b, "commits paused: %s\n", paused)
	}
	if lastErr != "" {
		fmt.Fprintf(b, "last error: %s\n", lastErr)
	}
}

// lastCommit is r.LastCommit, cached per HEAD: the mount renders Status on
// every read of .mindmount/status and reading the commit costs a few hundred
// microseconds.
func (t *Tracker) lastCommit() (gitrepo.CommitInfo, error) {
	t.mu.Lock()
	seen, info := t.headSeen, t.lastInfo
	t.mu.Unlock()
	if seen != "" && info.Hash == seen {
		return info, nil
	}
	info, err := t.r.LastCommit()
	if err != nil {
		return info, err
	}
	t.mu.Lock()
	if info.Hash == t.headSeen {
		t.lastInfo = info
	}
	t.mu.Unlock()
	return info, nil
}
