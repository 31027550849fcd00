package consolidate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// A dream is a consolidation's proposal on a branch of its own,
// refs/heads/mindmount/dream/<n>: it starts at a pinned base commit, reads
// the memories as they were there (objects only, no work tree: the
// agent's writes meanwhile are neither blocked nor seen), and commits each
// chunk's memory changes and cursor advance on the branch with the usual
// provenance trailers. Then it is integrated into the live branch with a
// real two-parent merge commit through the tracker (merge: auto), or waits
// for a person (merge: review; Dreams, Approve, Reject). The merge uses
// the merge drivers (Config.MergeFile: the access-log union, a retired
// sibling on a real conflict); a merge they cannot settle changes nothing,
// keeps the branch and leaves the cursor where it was, so the next run
// retries the same transcripts.

// DreamPrefix is where dreams' branches live (under refs/heads/).
const DreamPrefix = "mindmount/dream/"

// ErrDreamConflict means a dream could not be merged: an uncommitted edit
// is in the way, or a file changed on both sides that no driver merges.
// The dream stays on its branch; nothing else changed.
var ErrDreamConflict = errors.New("the dream could not be merged")

// ErrNoDream means no pending dream has the number asked for.
var ErrNoDream = errors.New("no pending dream with that number")

// ErrorNames names the errors of consolidation and review that a daemon's
// answer carries to the command that asked it (serve/control's kinds):
// the table lives beside the errors, the side that serves registers it.
func ErrorNames() map[string]error {
	return map[string]error{
		"no-dream":       ErrNoDream,
		"dream-conflict": ErrDreamConflict,
		"dream-moved":    ErrDreamMoved,
		"no-tip":         ErrNoTip,
		"no-provider":    ErrNoProvider,
	}
}

// FileMerger merges three versions of a file both the dream and the live
// branch changed (a nil side is a missing file): the merged content
// (deleted when the merge removes the file) and, on a memory's real
// conflict, the other version retired beside it at siblingPath; err when
// no rule merges the two changes. taken reports whether a path is in use.
// The daemon wires hooks.DreamMerger in (hooks.MergeFile, the one merge per
// path; hooks sits above consolidate); without one, a file changed on
// both sides is a conflict.
type FileMerger func(rel string, base, ours, theirs []byte, taken func(string) bool) (data []byte, deleted bool, siblingPath string, sibling []byte, err error)

// dream is one proposal under way.
type dream struct {
	n      int
	branch string   // mindmount/dream/<n>
	base   string   // the commit it started from ("" in an empty repository)
	tip    string   // its last commit; base until the first chunk commits
	chunks []string // the messages of its commits

	// own indexes the memories the dream's commits wrote, as they are at
	// its tip: until the merge the live graph does not hold them, and a
	// later chunk of the same dream (merge: review makes a run one dream)
	// must meet them as candidates (chunk.go). mems holds them parsed.
	own  *recall.Index
	mems map[string]*memgraph.Memory
}

// remember indexes the memories a commit of d wrote.
func (d *dream) remember(changes []gitrepo.Change) {
	for _, ch := range changes {
		if !memgraph.IsMemoryPath(ch.Path) {
			continue
		}
		if d.own == nil {
			d.own, d.mems = recall.New(), map[string]*memgraph.Memory{}
		}
		d.own.Delete(ch.Path)
		delete(d.mems, ch.Path)
		if ch.Delete {
			continue
		}
		if m, probs := memgraph.Parse(ch.Path, ch.Data); m != nil && len(probs) == 0 {
			d.own.Put(memgraph.RecallDoc(m))
			d.mems[ch.Path] = m
		}
	}
}

// newDream starts a dream at HEAD, numbered after every dream so far: the
// branches there are, and above given, the highest number the run's
// cursor records (a rejected dream's branch is gone, its number not free).
func (c *Consolidator) newDream(given int) (*dream, error) {
	base, err := c.r.Head()
	if err != nil {
		return nil, err
	}
	branches, err := c.r.Branches(DreamPrefix)
	if err != nil {
		return nil, err
	}
	n := given + 1
	for name := range branches {
		if k, err := strconv.Atoi(strings.TrimPrefix(name, DreamPrefix)); err == nil && k >= n {
			n = k + 1
		}
	}
	return &dream{n: n, branch: DreamPrefix + strconv.Itoa(n), base: base, tip: base}, nil
}

// read returns rel as the dream sees it: at its tip. nil when absent.
func (d *dream) read(r *gitrepo.Repo, rel string) ([]byte, error) {
	if d.tip == "" {
		return nil, nil
	}
	b, ok, err := r.ReadAt(d.tip, rel)
	if !ok {
		return nil, err
	}
	return b, err
}

// commitDream records one chunk on the dream's branch: the tracker writes
// the objects and moves only the branch (never HEAD, the work tree or the
// graph). The model's work is done: a shutdown starting now does not undo
// it.
func (c *Consolidator) commitDream(d *dream, changes []gitrepo.Change, msg string, when time.Time) (string, error) {
	hash, err := c.w.Apply(context.Background(), tracker.Change{Branch: d.branch, Parents: []string{d.tip}, Changes: changes,
		Message: msg, Author: Author, When: when})
	if err != nil || hash == "" {
		return hash, err
	}
	d.tip = hash
	d.chunks = append(d.chunks, msg)
	d.remember(changes)
	return hash, nil
}

// carryExec gives the last of changes, when it writes p, the executable
// bit p has at commit (a learned skill's script stays 100755 when its
// dream is merged).
func (c *Consolidator) carryExec(changes []gitrepo.Change, commit, p string) {
	n := len(changes)
	if n == 0 || changes[n-1].Path != p || changes[n-1].Delete {
		return
	}
	if exec, ok, err := c.r.ExecAt(commit, p); err == nil && ok {
		changes[n-1].Exec = exec
	}
}

// merge integrates d into the live branch: one commit with the two
// parents HEAD and d's tip, whose files the drivers merged, written into
// the work tree (never over an uncommitted edit) through the tracker. HEAD
// moving meanwhile (the agent keeps writing) only means computing again.
// given, when positive, is recorded in the merged cursor as the highest
// dream number given (an approved dream's branch is deleted after).
func (c *Consolidator) merge(ctx context.Context, d *dream, extra string, given int) (string, error) {
	if d.tip == d.base {
		return "", nil // nothing was proposed
	}
	for attempt := 0; ; attempt++ {
		ours, err := c.r.Head()
		if err != nil {
			return "", err
		}
		changes, siblings, err := c.mergeChanges(d, ours)
		if err != nil {
			return "", err
		}
		if given > 0 {
			if changes, err = c.recordGiven(changes, ours, given); err != nil {
				return "", err
			}
		}
		msg := c.mergeMessage(d, siblings, extra)
		hash, err := c.w.Apply(ctx, tracker.Change{Parents: []string{ours, d.tip}, Changes: changes, Message: msg,
			Author: Author, When: c.cfg.Now(), Worktree: true, Clean: true})
		switch {
		case err == nil:
			c.log.Info("dream merged", "dream", d.branch, "commit", gitrepo.ShortHash(hash), "siblings", len(siblings))
			return hash, nil
		case errors.Is(err, gitrepo.ErrRefMoved) && attempt < maxMergeAttempts:
			continue // a commit of the agent's came first: merge again
		case errors.Is(err, gitrepo.ErrDirty):
			return "", fmt.Errorf("%w: %s is kept; %v", ErrDreamConflict, d.branch, err)
		}
		return "", err
	}
}

// recordGiven makes the cursor the merge commits record n as a dream
// number given, so n is never handed out again once its branch is gone.
func (c *Consolidator) recordGiven(changes []gitrepo.Change, ours string, n int) ([]gitrepo.Change, error) {
	for i, ch := range changes {
		if ch.Path != CursorFile || ch.Delete {
			continue
		}
		cur, err := ParseCursor(ch.Data)
		if err != nil {
			return nil, err
		}
		cur.Dreams = max(cur.Dreams, n)
		changes[i].Data = cur.Render()
		return changes, nil
	}
	cur, err := c.cursorAt(ours)
	if err != nil {
		return nil, err
	}
	if cur.Dreams < n {
		cur.Dreams = n
		changes = append(changes, gitrepo.Change{Path: CursorFile, Data: cur.Render()})
	}
	return changes, nil
}

// maxMergeAttempts bounds the merges recomputed because HEAD moved.
const maxMergeAttempts = 50

// mergeChanges computes, for every file the dream changed, its merge with
// ours (the live branch) over the dream's base, as changes to ours.
func (c *Consolidator) mergeChanges(d *dream, ours string) ([]gitrepo.Change, []string, error) {
	paths, err := c.r.Changed(d.base, d.tip)
	if err != nil {
		return nil, nil, err
	}
	used := map[string]bool{}
	for _, p := range paths {
		used[p] = true
	}
	taken := func(p string) bool {
		if used[p] {
			return true
		}
		for _, at := range []string{ours, d.tip} {
			if _, ok, _ := c.r.ReadAt(at, p); ok {
				return true
			}
		}
		return false
	}
	var changes []gitrepo.Change
	var siblings []string
	set := func(p string, o, out []byte, deleted bool) {
		switch {
		case deleted && o != nil:
			changes = append(changes, gitrepo.Change{Path: p, Delete: true})
		case !deleted && (o == nil || !bytes.Equal(o, out)):
			changes = append(changes, gitrepo.Change{Path: p, Data: out})
		}
	}
	for _, p := range paths {
		b, o, t, err := c.three(d, ours, p)
		if err != nil {
			return nil, nil, err
		}
		if same(o, b) { // only the dream changed it: its version, and its mode
			set(p, o, t, t == nil)
			c.carryExec(changes, d.tip, p)
			continue
		}
		if same(o, t) {
			continue
		}
		if c.cfg.MergeFile == nil {
			return nil, nil, fmt.Errorf("%w: %s changed on both sides and no driver merges it; %s is kept", ErrDreamConflict, p, d.branch)
		}
		data, deleted, sibPath, sib, err := c.cfg.MergeFile(p, b, o, t, taken)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v; %s is kept", ErrDreamConflict, err, d.branch)
		}
		set(p, o, data, deleted)
		if sib != nil {
			used[sibPath] = true
			siblings = append(siblings, sibPath)
			changes = append(changes, gitrepo.Change{Path: sibPath, Data: sib})
		}
	}
	return changes, siblings, nil
}

// three reads p at the dream's base, at ours and at the dream's tip.
func (c *Consolidator) three(d *dream, ours, p string) (b, o, t []byte, err error) {
	read := func(at string) ([]byte, error) {
		if at == "" {
			return nil, nil
		}
		data, ok, err := c.r.ReadAt(at, p)
		if !ok {
			return nil, err
		}
		return data, err
	}
	if b, err = read(d.base); err != nil {
		return
	}
	if o, err = read(ours); err != nil {
		return
	}
	t, err = read(d.tip)
	return
}

// same reports equal contents, a missing file equal only to one.
func same(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// mergeSubject is the merge commit's subject: what merged, so the merge
// and the dream's commit below it never read the same in "git log
// --oneline". One chunk keeps its subject (the source and the counts,
// which the web page and "mindmount status" read) and names the dream
// after it; more say how many chunks the dream held.
func mergeSubject(d *dream) string {
	if len(d.chunks) == 1 {
		return fmt.Sprintf("%s (merge of dream %d)", gitrepo.Subject(d.chunks[0]), d.n)
	}
	return fmt.Sprintf("consolidate: merge dream %d (%d %s)", d.n, len(d.chunks), memgraph.Plural(len(d.chunks), "chunk", "chunks"))
}

// mergeMessage is the merge commit's message: mergeSubject, what was kept
// beside what, then the bodies of the dream's commits — files, what was skipped and why, the
// model and source trailers — so "git log" of the live branch tells the
// whole story, and one Mindmount-Dream trailer.
func (c *Consolidator) mergeMessage(d *dream, siblings []string, extra string) string {
	var b strings.Builder
	b.WriteString(mergeSubject(d))
	fmt.Fprintf(&b, "\n\nMerge branch '%s'\n", d.branch)
	if len(siblings) > 0 {
		b.WriteString("\nChanged here meanwhile; the dream's version is kept retired beside the newer:\n")
		for _, s := range siblings {
			b.WriteString("  " + s + "\n")
		}
	}
	trailer := "Mindmount-Dream: " + d.branch
	for _, msg := range d.chunks {
		_, body, _ := strings.Cut(msg, "\n")
		var kept []string
		for _, l := range strings.Split(strings.TrimSpace(body), "\n") {
			if l != trailer {
				kept = append(kept, l)
			}
		}
		if len(d.chunks) > 1 {
			b.WriteString("\n" + gitrepo.Subject(msg) + "\n")
		}
		b.WriteString("\n" + strings.Join(kept, "\n") + "\n")
	}
	b.WriteString(trailer + "\n" + extra)
	return b.String()
}
