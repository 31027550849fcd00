package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// A path's history without walking the history: git finds the commits
// that touched a file by comparing every commit's tree with its parent's,
// so "git log -- path" at 10,000 commits reads 10,000 trees (even with
// the commit-graph's Bloom filters it walks every commit and diffs the
// false positives). The history index records, once, which paths each
// commit of HEAD's first-parent chain changed; Pack brings it up to HEAD
// and saves it, and History walks only the commits made since (the tail),
// in memory. It is a cache: losing or corrupting it costs a rebuild,
// never a wrong answer about a commit it does not hold.

// ErrNoHistory is returned by History when the index is further from HEAD
// than a request should walk: IndexHistory (run by Pack) builds it.
var ErrNoHistory = errors.New("the history index does not reach HEAD yet")

// maxTail is how many commits past the index History indexes on a
// request; Pack indexes every hundred or so commits, so only a history
// never indexed (or rewritten far back) is further.
var maxTail = 1000

// history is the index of HEAD's first-parent chain: which paths each
// commit changed against its first parent (the root commit: every path).
type history struct {
	mu      sync.Mutex // held while reading, extending and saving
	loaded  bool       // the saved index was read (or found missing)
	dirty   bool       // commits were indexed since the last save
	tooFar  bool       // a request found HEAD too far; IndexHistory clears it
	commits []plumbing.Hash
	pos     map[plumbing.Hash]int32 // commit -> its place in commits
	paths   map[string][]int32      // path -> places of the commits that changed it, ascending
}

// historyFile is where the index is saved, in git's directory where
// nothing of it is pushed or committed.
func (r *Repo) historyFile() string { return filepath.Join(r.gitDir, "mindmount-history") }

// History returns the commits of HEAD's first-parent chain that changed
// path (against their first parent, as "git log --first-parent -m --
// path" finds them), newest first, at most limit. It indexes the commits
// made since the index was last brought up to date; when that is more
// than maxTail commits it returns ErrNoHistory and leaves the work to
// IndexHistory. It never takes the commit lock.
func (r *Repo) History(ctx context.Context, path string, limit int) ([]string, error) {
	h := &r.history
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := r.extendHistory(ctx, h, maxTail); err != nil {
		return nil, err
	}
	ps := h.paths[path]
	out := make([]string, 0, min(limit, len(ps)))
	for i := len(ps) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, h.commits[ps[i]].String())
	}
	return out, nil
}

// IndexHistory brings the history index up to HEAD, however far, and
// saves it. It stops when ctx ends, keeping what it indexed (the next
// call goes on from there). It never takes the commit lock.
func (r *Repo) IndexHistory(ctx context.Context) error {
	h := &r.history
	h.mu.Lock()
	defer h.mu.Unlock()
	err := r.extendHistory(ctx, h, -1)
	if h.dirty {
		if serr := r.saveHistory(h); serr != nil && err == nil {
			err = serr
		}
	}
	return err
}

// extendHistory indexes the commits from the index's last one to HEAD
// (at most limit of them; -1: all). A HEAD that moved back or to another
// line of history keeps the index up to the last commit the two share.
// A short tail is diffed here, from the trees the commits left in the
// cache; a long one (a first build) by git, which reads packed trees
// several times faster than go-git.
func (r *Repo) extendHistory(ctx context.Context, h *history, limit int) error {
	if !h.loaded {
		r.loadHistory(h)
		h.loaded = true
	}
	head, err := r.Head()
	if err != nil || head == "" {
		return err
	}
	hd := plumbing.NewHash(head)
	if n := len(h.commits); n > 0 && h.commits[n-1] == hd {
		return nil
	}
	if h.tooFar && limit >= 0 {
		return ErrNoHistory
	}
	tail, base, err := r.firstParents(hd, h.pos, shortTail)
	if err != nil {
		return err
	}
	if base < 0 && len(tail) == shortTail {
		if _, lerr := exec.LookPath("git"); lerr == nil {
			err := r.extendWithGit(ctx, h, head, limit)
			h.tooFar = errors.Is(err, ErrNoHistory)
			return err
		}
		walk := -1
		if limit >= 0 {
			walk = limit + 1
		}
		if tail, base, err = r.firstParents(hd, h.pos, walk); err != nil {
			return err
		}
	}
	if limit >= 0 && len(tail) > limit {
		h.tooFar = true
		return ErrNoHistory
	}
	h.truncate(int(base) + 1)
	// Oldest first, so what is done when ctx ends is a valid index.
	for i := len(tail) - 1; i >= 0; i-- {
		if err := ctx.Err(); err != nil {
			return err
		}
		changed, err := r.changedBy(tail[i])
		if err != nil {
			return err
		}
		h.add(tail[i].commit, changed)
	}
	return nil
}

// shortTail is the longest tail diffed in process.
const shortTail = 16

// link is a commit on the first-parent chain.
type link struct{ commit, tree, parent plumbing.Hash }

// firstParents walks back from c along first parents until a commit
// known holds, at most limit commits (-1: to the root). base is the
// place of the known commit it stopped at, -1 when it found none.
func (r *Repo) firstParents(c plumbing.Hash, known map[plumbing.Hash]int32, limit int) (tail []link, base int32, err error) {
	for !c.IsZero() {
		if p, ok := known[c]; ok {
			return tail, p, nil
		}
		if limit >= 0 && len(tail) >= limit {
			break
		}
		r.mu.Lock()
		b, err := r.readObject(plumbing.CommitObject, c)
		r.mu.Unlock()
		if err != nil {
			return nil, -1, err
		}
		tree, parent, err := commitLinks(b)
		if err != nil {
			return nil, -1, fmt.Errorf("commit %s: %w", c, err)
		}
		tail = append(tail, link{c, tree, parent})
		c = parent
	}
	return tail, -1, nil
}

// changedBy lists the paths a commit changed against its first parent.
// It holds the commit lock for one diff at a time (readObject may reopen
// the storage); trees the commits wrote are usually still cached.
func (r *Repo) changedBy(l link) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var from plumbing.Hash
	if !l.parent.IsZero() {
		var err error
		if from, err = r.treeOf(l.parent.String(), false); err != nil {
			return nil, err
		}
	}
	var changed []string
	err := r.diffTrees(from, l.tree, "", &changed)
	return changed, err
}

// extendWithGit indexes the commits from head back to one the index holds
// (or to the root) from one "git log", read as it streams and stopped at
// that commit. With limit >= 0, more commits than that is ErrNoHistory.
func (r *Repo) extendWithGit(ctx context.Context, h *history, head string, limit int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "-C", r.dir, "--no-optional-locks", "log", "--first-parent", "-m",
		"--name-only", "--no-renames", "--root", "-z", "--format=/%H", head, "--")
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	if limit < 0 {
		// A whole history is background work, as packing is.
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, 10)
	}
	defer cmd.Wait()
	defer cancel() // before Wait: git stops when the base is found
	// "/HASH\0" per commit, then "\n" and its paths, each ended by a NUL.
	// A path never starts with "/", so a token that does is a commit.
	type rec struct {
		c     plumbing.Hash
		paths []string
	}
	var recs []rec
	base := int32(-1)
	rd := bufio.NewReaderSize(out, 1<<16)
	first := false
	for {
		tok, err := rd.ReadBytes(0)
		if err == io.EOF && len(tok) == 0 {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("git log: %w", err)
		}
		tok = tok[:len(tok)-1]
		if hexHash, ok := bytes.CutPrefix(tok, []byte("/")); ok {
			if !plumbing.IsHash(string(hexHash)) {
				return fmt.Errorf("git log: unexpected %q", tok)
			}
			c := plumbing.NewHash(string(hexHash))
			if p, ok := h.pos[c]; ok {
				base = p
				break
			}
			if limit >= 0 && len(recs) >= limit {
				return ErrNoHistory
			}
			recs = append(recs, rec{c: c})
			first = true
			continue
		}
		if len(recs) == 0 {
			return fmt.Errorf("git log: unexpected %q", tok)
		}
		if first {
			tok, first = bytes.TrimPrefix(tok, []byte("\n")), false
		}
		if len(tok) > 0 {
			recs[len(recs)-1].paths = append(recs[len(recs)-1].paths, string(tok))
		}
	}
	if base < 0 {
		if err := cmd.Wait(); err != nil && ctx.Err() == nil {
			return fmt.Errorf("git log: %w", err)
		}
	}
	h.truncate(int(base) + 1)
	for i := len(recs) - 1; i >= 0; i-- {
		h.add(recs[i].c, recs[i].paths)
	}
	return nil
}

// commitLinks reads a raw commit's tree and first parent.
func commitLinks(b []byte) (tree, parent plumbing.Hash, err error) {
	hdr, _, _ := bytes.Cut(b, []byte("\n\n"))
	for _, line := range bytes.Split(hdr, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("tree ")); ok && tree.IsZero() {
			tree = plumbing.NewHash(string(v))
		} else if v, ok := bytes.CutPrefix(line, []byte("parent ")); ok && parent.IsZero() {
			parent = plumbing.NewHash(string(v))
		}
	}
	if tree.IsZero() {
		return tree, parent, errors.New("no tree")
	}
	return tree, parent, nil
}

// add appends a commit and the paths it changed.
func (h *history) add(c plumbing.Hash, changed []string) {
	if h.pos == nil {
		h.pos, h.paths = map[plumbing.Hash]int32{}, map[string][]int32{}
	}
	p := int32(len(h.commits))
	h.commits = append(h.commits, c)
	h.pos[c] = p
	for _, path := range changed {
		h.paths[path] = append(h.paths[path], p)
	}
	h.dirty = true
}

// truncate keeps the first n commits.
func (h *history) truncate(n int) {
	if n >= len(h.commits) {
		return
	}
	for _, c := range h.commits[n:] {
		delete(h.pos, c)
	}
	h.commits = h.commits[:n]
	for path, ps := range h.paths {
		k := len(ps)
		for k > 0 && int(ps[k-1]) >= n {
			k--
		}
		if k == 0 {
			delete(h.paths, path)
		} else {
			h.paths[path] = ps[:k]
		}
	}
	h.dirty = true
}

// historyMagic starts a saved index. After it, each commit oldest first:
// its hash in hex, then each path it changed, every field ended by a NUL
// (git allows no NUL in a path), and an empty field ending the commit.
const historyMagic = "mindmount-history 1\n"

func (r *Repo) saveHistory(h *history) error {
	byCommit := make([][]string, len(h.commits))
	for path, ps := range h.paths {
		for _, p := range ps {
			byCommit[p] = append(byCommit[p], path)
		}
	}
	var b bytes.Buffer
	b.WriteString(historyMagic)
	for i, c := range h.commits {
		b.WriteString(c.String())
		b.WriteByte(0)
		for _, path := range byCommit[i] {
			b.WriteString(path)
			b.WriteByte(0)
		}
		b.WriteByte(0)
	}
	perm := os.FileMode(0o644)
	if r.private {
		perm = 0o600
	}
	if err := atomicfile.WriteFile(r.historyFile(), b.Bytes(), perm); err != nil {
		return err
	}
	h.dirty = false
	return nil
}

// loadHistory reads the saved index; one that is missing or malformed
// leaves the index empty, to be rebuilt.
func (r *Repo) loadHistory(h *history) {
	b, err := os.ReadFile(r.historyFile())
	if err != nil {
		return
	}
	if p, ok := parseHistory(b); ok {
		h.commits, h.pos, h.paths = p.commits, p.pos, p.paths
	}
}

// parseHistory decodes a saved index; ok is false when b is not one.
func parseHistory(b []byte) (*history, bool) {
	rest, ok := bytes.CutPrefix(b, []byte(historyMagic))
	if !ok {
		return nil, false
	}
	h := &history{pos: map[plumbing.Hash]int32{}, paths: map[string][]int32{}}
	for len(rest) > 0 {
		hexHash, after, ok := bytes.Cut(rest, []byte{0})
		if !ok || !plumbing.IsHash(string(hexHash)) {
			return nil, false
		}
		c := plumbing.NewHash(string(hexHash))
		if _, dup := h.pos[c]; dup {
			return nil, false
		}
		p := int32(len(h.commits))
		h.commits = append(h.commits, c)
		h.pos[c] = p
		rest = after
		for {
			path, after, ok := bytes.Cut(rest, []byte{0})
			if !ok {
				return nil, false
			}
			rest = after
			if len(path) == 0 {
				break
			}
			ps := h.paths[string(path)]
			if len(ps) > 0 && ps[len(ps)-1] == p {
				return nil, false // a path named twice for one commit
			}
			h.paths[string(path)] = append(ps, p)
		}
	}
	return h, true
}
