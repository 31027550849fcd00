package gitrepo

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/mindmount/mindmount/fs/gitrepo/failpoint"
	"github.com/mindmount/mindmount/memgraph/subtree"
)

// ErrRefMoved is returned when the branch kept moving under us (another
// writer committed) on every attempt of a commit, or, for a commit with
// Parents, when HEAD is no longer its first parent.
var ErrRefMoved = errors.New("branch moved during commit")

// ErrDirty is returned by a Clean commit when a file it would write
// differs in the work tree from HEAD: an uncommitted (or invalid, held
// back) local edit that the commit must not overwrite. Nothing was written.
var ErrDirty = errors.New("uncommitted change in the work tree")

// Commit is one commit to record: the one description that a tracker
// burst, a consolidation, an init upgrade and a merge share, so they all
// go through one sequence (Record) with one flush before the branch moves
// and every failpoint.
type Commit struct {
	// Changes turn the tree of HEAD into the tree of the commit. Paths
	// are checked (CheckPath); when the same path appears twice the later
	// change wins.
	Changes []Change
	Message string
	Author  Author
	When    time.Time
	// Parents are the commit's parents, first the commit HEAD must be
	// ("" for an unborn branch), then the commits merged in. Empty: on top
	// of HEAD as Record finds it, retried when HEAD moves meanwhile. With
	// Parents a HEAD that is not Parents[0] makes Record fail with
	// ErrRefMoved and change nothing. A merge is a Commit with two
	// parents whose Changes were computed by the merge drivers.
	Parents []string
	// Worktree writes Changes into the work tree too, symlink-safe (see
	// WriteFile), before the commit; the files are flushed with the
	// objects, once, before the branch moves.
	Worktree bool
	// Clean refuses (ErrDirty) when a path Worktree would write differs
	// in the work tree from HEAD, before anything is written.
	Clean bool
	// FastForward moves the branch to Parents[1] instead of making a
	// commit; Changes must turn HEAD's tree into exactly its tree.
	FastForward bool
	// Branch commits on refs/heads/<Branch> instead of HEAD's branch: a
	// consolidation that dreams beside the work tree. Such a commit never
	// touches the work tree or the index (Worktree is refused); a branch
	// that does not exist yet is created by a commit whose Parents are
	// [""] or [base], base being the commit it starts from.
	Branch string
	// DeleteBranch removes refs/heads/<Branch> instead of making a
	// commit ("git branch -D", for a rejected dream): Parents holds the
	// one commit the branch must point at (ErrRefMoved otherwise, and
	// nothing changes), Changes are empty, and HEAD's own branch is
	// refused. The branch's reflog goes with it, as with git.
	DeleteBranch bool
}

// Commit records exactly the given contents as one commit on the current
// branch, authored and committed by who at when. It does not read the work
// tree for content. Changes equal to HEAD are dropped; when nothing is left
// it returns "" and makes no commit. The .git/index entries of the
// committed paths are updated so that "git status" stays clean.
func (r *Repo) Commit(changes []Change, msg string, who Author, when time.Time) (string, error) {
	return r.Record(Commit{Changes: changes, Message: msg, Author: who, When: when})
}

// Apply is Commit that also writes the changes to the work tree (see
// Commit.Worktree), all under the commit lock, so no other commit
// interleaves. A memory folder replaced by a link makes it fail with
// ErrUnsafePath before anything is committed.
func (r *Repo) Apply(changes []Change, msg string, who Author, when time.Time) (string, error) {
	return r.Record(Commit{Changes: changes, Message: msg, Author: who, When: when, Worktree: true})
}

// Record makes the commit c: the one commit sequence of a repository.
// Under the commit lock it reads HEAD (and checks Parents), writes the
// work tree files (Worktree) without fsync, takes .git/index.lock, writes
// the blobs, the trees along the changed paths and the commit object as loose
// objects, flushes all of them at once (parallel fdatasync, about one
// journal commit) so HEAD never names content a power loss could take
// back, moves the branch with a compare-and-swap, and brings the index
// entries of the changed paths in line. It returns the new commit, or ""
// when a one-parent commit changed nothing.
func (r *Repo) Record(c Commit) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	changes, err := normalize(c.Changes)
	if err != nil {
		return "", err
	}
	if c.DeleteBranch {
		return "", r.deleteBranch(c)
	}
	merge := len(c.Parents) > 1
	if err := checkShape(c, merge); err != nil {
		return "", err
	}
	if len(changes) == 0 && !merge {
		return "", nil
	}
	r.unsynced = r.unsynced[:0]
	todo := make([]pending, len(changes))
	for i, ch := range changes {
		todo[i] = pendingOf(ch)
	}
	h, err := r.headFor(c)
	if err != nil {
		return "", err
	}
	b, err := r.beneath()
	if err != nil {
		return "", err
	}
	defer b.close()
	if c.Worktree {
		if err := r.writeWorktreeOf(b, h, changes, c.Clean); err != nil {
			return "", err
		}
	}
	// The index lock is taken after the work tree is written, as git
	// does: a crash in between leaves an ordinary uncommitted change.
	lock, err := r.lockIndex()
	if err != nil {
		return "", err
	}
	defer func() {
		if lock != nil {
			r.unlockIndex(lock)
		}
	}()
	id, eff, err := r.writeAndMove(b, h, todo, c, merge)
	if err != nil {
		return "", err
	}
	if c.Branch == "" {
		taken, err := r.settleIndex(lock, todo, eff)
		if taken {
			lock = nil
		}
		if err != nil {
			return "", err
		}
	}
	if len(eff) == 0 && !merge {
		return "", nil
	}
	return id.String(), nil
}

// checkShape refuses a Commit whose fields contradict each other.
func checkShape(c Commit, merge bool) error {
	switch {
	case c.FastForward && !merge:
		return errors.New("a fast-forward needs the commit to move to as the second parent")
	case c.Branch != "" && c.Worktree:
		return errors.New("a commit on another branch than HEAD's cannot write the work tree")
	case c.Branch != "":
		return checkBranch(c.Branch)
	}
	return nil
}

// writeAndMove writes the objects of the changes that still differ from
// the branch's tree, flushes them, and moves the branch by compare-and-
// swap; a one-parent commit whose branch moved meanwhile is rebuilt on the
// new tip (up to three tries). It returns the commit and the effective
// changes; no commit (a zero id) when nothing differed. r.mu and the index
// lock are held.
func (r *Repo) writeAndMove(b *beneathFS, h head, todo []pending, c Commit, merge bool) (plumbing.Hash, []pending, error) {
	var id plumbing.Hash
	var eff []pending
	var err error
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if h, err = r.headFor(c); err != nil {
				return id, nil, err
			}
		}
		if eff, err = r.effective(h.tree, todo, eff[:0]); err != nil {
			return id, nil, err
		}
		if len(eff) == 0 && !merge {
			return id, eff, nil
		}
		if id, err = r.writeCommit(h, eff, c); err != nil {
			return id, nil, err
		}
		failpoint.Inject(failpoint.ObjectsWritten)
		// The one flush: work tree files and loose objects, before the ref.
		if err := b.flush(r.unsynced); err != nil {
			return id, nil, fmt.Errorf("flush before moving %s: %w", h.name, err)
		}
		old := h.commit
		if h.new {
			old = plumbing.ZeroHash
		}
		err = r.casRef(h.name, old, id, c.Author, c.When, Subject(c.Message), c.Branch == "")
		if err == nil {
			failpoint.Inject(failpoint.RefUpdated)
			return id, eff, nil
		}
		if !errors.Is(err, errRefChanged) {
			return id, nil, fmt.Errorf("update %s: %w", h.name, err)
		}
		if len(c.Parents) > 0 || attempt == 2 {
			return id, nil, fmt.Errorf("%w: %s", ErrRefMoved, h.name)
		}
	}
}

// deleteBranch removes c.Branch, which must point at c.Parents[0]: the
// one sequence's end for a ref that goes away. There is nothing to flush
// (no object is written); the RefUpdated failpoint marks the ref gone.
// r.mu is held.
func (r *Repo) deleteBranch(c Commit) error {
	switch {
	case c.Branch == "":
		return errors.New("deleting a branch needs its name")
	case len(c.Changes) > 0 || c.Worktree || c.FastForward:
		return errors.New("deleting a branch makes no commit: no changes, work tree or fast-forward")
	case len(c.Parents) != 1 || c.Parents[0] == "":
		return errors.New("deleting a branch needs the commit it must point at")
	}
	if err := checkBranch(c.Branch); err != nil {
		return err
	}
	name := plumbing.NewBranchReferenceName(c.Branch)
	if ref, err := r.store.Reference(plumbing.HEAD); err == nil && ref.Type() == plumbing.SymbolicReference && ref.Target() == name {
		return fmt.Errorf("%w: %s is HEAD's branch", ErrCurrentBranch, c.Branch)
	}
	err := r.deleteRef(name, hashOf(c.Parents[0]))
	if errors.Is(err, errRefChanged) {
		return fmt.Errorf("%w: %s no longer points at %s", ErrRefMoved, c.Branch, ShortHash(c.Parents[0]))
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", c.Branch, err)
	}
	failpoint.Inject(failpoint.RefUpdated)
	return nil
}

// ErrCurrentBranch is returned for deleting the branch HEAD is on.
var ErrCurrentBranch = errors.New("cannot delete the checked-out branch")

// headFor reads the branch c moves (HEAD's, or c.Branch) and, when c has
// parents, checks that it is the first of them.
func (r *Repo) headFor(c Commit) (head, error) {
	var h head
	var err error
	if c.Branch != "" {
		h, err = r.readRef(plumbing.NewBranchReferenceName(c.Branch))
	} else {
		h, err = r.readHeadRef()
	}
	if err != nil {
		return h, err
	}
	if len(c.Parents) > 0 && h.commit != hashOf(c.Parents[0]) {
		if c.Branch != "" && h.commit.IsZero() && !hashOf(c.Parents[0]).IsZero() {
			// A new branch starting from Parents[0].
			return r.headAt(head{name: h.name, commit: hashOf(c.Parents[0]), new: true})
		}
		return h, fmt.Errorf("%w: %s is %s, the commit was computed on %s", ErrRefMoved, h.name.Short(), ShortHash(h.commit.String()), ShortHash(c.Parents[0]))
	}
	return h, nil
}

// checkBranch is git's rule for a branch name (git check-ref-format),
// narrowed like CheckPath: a name that could leave refs/heads or confuse a
// revision parser is refused.
func checkBranch(name string) error {
	if err := CheckPath(name); err != nil {
		return fmt.Errorf("%w: branch %q", ErrBadPath, name)
	}
	if strings.ContainsAny(name, " ~^:?*[") || strings.Contains(name, "@{") || strings.Contains(name, "..") || strings.HasPrefix(name, "-") ||
		strings.HasSuffix(name, ".lock") || strings.HasSuffix(name, ".") || strings.Contains(name, "/.") || strings.HasPrefix(name, ".") {
		return fmt.Errorf("%w: %q is not a branch name git accepts", ErrBadPath, name)
	}
	return nil
}

// hashOf is the hash of a commit named in Parents; "" is the zero hash
// (an unborn branch).
func hashOf(s string) plumbing.Hash {
	if s == "" {
		return plumbing.ZeroHash
	}
	return plumbing.NewHash(s)
}

// writeWorktreeOf writes the changes into the work tree beneath its root,
// deletions first (they may empty a directory that a new file of the same
// name replaces), without fsync: the commit's one flush covers them. With
// clean every path is first checked against HEAD's tree (ErrDirty).
func (r *Repo) writeWorktreeOf(b *beneathFS, h head, changes []Change, clean bool) error {
	if clean {
		for _, c := range changes {
			if err := r.checkClean(h.tree, c.Path); err != nil {
				return err
			}
		}
	}
	for _, del := range []bool{true, false} {
		for _, c := range changes {
			if c.Delete != del {
				continue
			}
			if del {
				if err := b.remove(c.Path); err != nil {
					return fmt.Errorf("remove %s: %w", c.Path, err)
				}
			} else if err := b.write(c.Path, c.Data, r.filePerm(c.Exec), false); err != nil {
				return fmt.Errorf("write %s: %w", c.Path, err)
			}
		}
	}
	failpoint.Inject(failpoint.WorktreeWritten)
	if r.BeforeCommit != nil {
		return r.BeforeCommit()
	}
	return nil
}

// effective keeps the changes of todo that differ from the tree.
func (r *Repo) effective(tree plumbing.Hash, todo, out []pending) ([]pending, error) {
	for _, p := range todo {
		e, ok, err := r.lookup(tree, p.Path)
		if err != nil {
			return nil, err
		}
		if p.Delete && (!ok || e.isTree()) || !p.Delete && ok && e.hash == p.id && e.mode == p.mode {
			continue // already so in HEAD
		}
		out = append(out, p)
	}
	return out, nil
}

// writeCommit writes the objects of the commit on top of h: blobs, trees
// and the commit object; a fast-forward writes nothing and names the
// commit it moves to.
func (r *Repo) writeCommit(h head, eff []pending, c Commit) (plumbing.Hash, error) {
	if c.FastForward {
		return hashOf(c.Parents[1]), nil
	}
	root, err := r.writeChanges(h.tree, eff)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	parents := []plumbing.Hash{h.commit}
	for _, p := range c.Parents[min(1, len(c.Parents)):] {
		parents = append(parents, hashOf(p))
	}
	return r.writeObject("commit", encodeCommit(root, parents, c.Author, c.When, c.Message))
}

// checkClean returns ErrDirty when the work tree file rel differs from its
// version in tree (a missing file equals a missing entry).
func (r *Repo) checkClean(tree plumbing.Hash, rel string) error {
	e, ok, err := r.lookup(tree, rel)
	if err != nil {
		return err
	}
	if ok && e.isTree() {
		ok = false
	}
	data, rerr := r.tree.ReadFile(rel, 0)
	isDir := errors.Is(rerr, syscall.EISDIR) || errors.Is(rerr, subtree.ErrNotRegular)
	switch {
	case rerr != nil && !ok && (errors.Is(rerr, os.ErrNotExist) || isDir):
		return nil
	case rerr != nil && errors.Is(rerr, os.ErrNotExist):
		return fmt.Errorf("%w: %s (deleted)", ErrDirty, rel)
	case rerr != nil && (isDir || errors.Is(rerr, subtree.ErrUnsafePath)):
		return fmt.Errorf("%w: %s (not a file)", ErrDirty, rel)
	case rerr != nil:
		return rerr
	case !ok || hashObject("blob", data) != e.hash:
		return fmt.Errorf("%w: %s", ErrDirty, rel)
	}
	return nil
}

// normalize checks every path and keeps the last change per path, sorted.
func normalize(changes []Change) ([]Change, error) {
	last := make(map[string]Change, len(changes))
	for _, c := range changes {
		if err := CheckPath(c.Path); err != nil {
			return nil, err
		}
		last[c.Path] = c
	}
	out := make([]Change, 0, len(last))
	for _, c := range last {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	// A file cannot also be a directory of another written file.
	for _, c := range out {
		if c.Delete {
			continue
		}
		for dir := path.Dir(c.Path); dir != "."; dir = path.Dir(dir) {
			if o, ok := last[dir]; ok && !o.Delete {
				return nil, fmt.Errorf("%s: cannot write both a file %s and a file inside it", c.Path, dir)
			}
		}
	}
	return out, nil
}

// ErrBadPath is wrapped by CheckPath's errors: git cannot hold the path,
// or mindmount will not commit it.
var ErrBadPath = errors.New("path cannot be committed")

// CheckPath is the one rule for which repo-relative paths ('/'-separated)
// mindmount commits: not empty or absolute, no "", "." or ".." component, no
// backslash (git for Windows and go-git read it as a separator), no
// control character (a newline in a name would start a line of its own in
// a commit message, an index or the context), and no component that is
// ".git" in any letter case (git refuses such trees; "git fsck" flags
// them). The error says which rule was broken and wraps ErrBadPath.
func CheckPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") {
		return fmt.Errorf("%w: %q is not a relative path", ErrBadPath, p)
	}
	if strings.Contains(p, "\\") {
		return fmt.Errorf("%w: %q holds a backslash", ErrBadPath, p)
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("%w: %q holds a control character", ErrBadPath, p)
		}
	}
	for _, part := range strings.Split(p, "/") {
		switch part {
		case "", ".", "..":
			return fmt.Errorf("%w: %q has an empty, . or .. component", ErrBadPath, p)
		}
		if strings.EqualFold(part, ".git") {
			return fmt.Errorf("%w: %q is inside a folder named .git (in any letter case), which git refuses to store", ErrBadPath, p)
		}
	}
	return nil
}

// pending is one change with its blob computed.
type pending struct {
	Change
	id   plumbing.Hash
	mode uint32
}

// pendingOf computes the blob id and mode of a change.
func pendingOf(c Change) pending {
	p := pending{Change: c}
	if !c.Delete {
		p.id = hashObject("blob", c.Data)
		p.mode = modeFile
		if c.Exec {
			p.mode = modeExec
		}
	}
	return p
}

// writeChanges writes the blobs of ps and the trees along their paths on
// top of the tree base, and returns the new root tree: what a commit and a
// merge commit both record.
func (r *Repo) writeChanges(base plumbing.Hash, ps []pending) (plumbing.Hash, error) {
	for _, p := range ps {
		if !p.Delete {
			if _, err := r.writeObject("blob", p.Data); err != nil {
				return plumbing.ZeroHash, err
			}
		}
	}
	root, _, err := r.buildTree(base, buildNodes(ps))
	return root, err
}

// head is the state of HEAD when a commit starts.
type head struct {
	name   plumbing.ReferenceName // the ref to move (refs/heads/main, or HEAD when detached)
	commit plumbing.Hash          // zero when the branch is unborn
	tree   plumbing.Hash
	new    bool // a branch to create: commit is its base, the ref does not exist
}

func (r *Repo) readHeadRef() (head, error) {
	ref, err := r.store.Reference(plumbing.HEAD)
	if err != nil {
		return head{}, fmt.Errorf("read HEAD: %w", err)
	}
	if ref.Type() == plumbing.SymbolicReference {
		return r.readRef(ref.Target())
	}
	return r.headAt(head{name: plumbing.HEAD, commit: ref.Hash()})
}

// readRef reads the branch name; an unborn one has a zero commit.
func (r *Repo) readRef(name plumbing.ReferenceName) (head, error) {
	ref, err := r.store.Reference(name)
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		return head{name: name}, nil // unborn branch: the first commit creates it
	}
	if err != nil {
		return head{}, fmt.Errorf("read %s: %w", name, err)
	}
	return r.headAt(head{name: name, commit: ref.Hash()})
}

// headAt fills in the tree of h.commit.
func (r *Repo) headAt(h head) (head, error) {
	b, err := r.readObject(plumbing.CommitObject, h.commit)
	if err != nil {
		return head{}, err
	}
	tree, ok := strings.CutPrefix(string(b), "tree ")
	if !ok || len(tree) < 40 {
		return head{}, fmt.Errorf("commit %s: no tree", h.commit)
	}
	h.tree = plumbing.NewHash(tree[:40])
	return h, nil
}

// settleIndex is the end of every commit, after the branch moved: the
// index entries of todo are brought in line with it, and .gitignore rules
// are read again when changed holds a .gitignore. When the index changed
// it takes over lock (commitIndex renames or releases it) and says so.
func (r *Repo) settleIndex(lock *os.File, todo, changed []pending) (taken bool, err error) {
	idx, err := r.idx.load()
	if err != nil {
		return false, err
	}
	dirty := false
	for _, p := range todo {
		if r.updateEntry(idx, p) {
			dirty = true
		}
	}
	if dirty {
		taken = true
		if err := r.commitIndex(lock, idx, commitPoints); err != nil {
			return taken, err
		}
	}
	for _, p := range changed {
		if path.Base(p.Path) == ".gitignore" {
			r.ReloadIgnores()
			break
		}
	}
	return taken, nil
}

// updateEntry brings the index entry of one committed path in line with
// the commit; it reports whether anything changed.
func (r *Repo) updateEntry(idx *index.Index, p pending) bool {
	if p.Delete {
		n := len(idx.Entries)
		removePath(idx, p.Path)
		return len(idx.Entries) != n
	}
	abs := filepath.Join(r.dir, filepath.FromSlash(p.Path))
	if old := getEntry(idx, p.Path); old != nil && old.Hash == p.id && uint32(old.Mode) == p.mode && !old.ModifiedAt.IsZero() {
		// Up to date already, unless the work tree file was touched since.
		if fi, err := os.Lstat(abs); err == nil && fi.ModTime().Equal(old.ModifiedAt) && uint32(fi.Size()) == old.Size {
			return false
		}
	}
	removePrefix(idx, p.Path) // a file replacing a directory
	for dir := path.Dir(p.Path); dir != "."; dir = path.Dir(dir) {
		removePath(idx, dir) // a directory replacing a file
	}
	setEntry(idx, newEntry(p.Path, abs, p.id, p.mode, p.Data))
	return true
}

// node is one directory level of a batch of changes.
type node struct {
	file *pending // a change of the file with this name
	sub  map[string]*node
}

func buildNodes(ps []pending) *node {
	root := &node{}
	for i := range ps {
		n := root
		rest := ps[i].Path
		for {
			name, tail, more := cut(rest)
			if n.sub == nil {
				n.sub = map[string]*node{}
			}
			c := n.sub[name]
			if c == nil {
				c = &node{}
				n.sub[name] = c
			}
			if !more {
				c.file = &ps[i]
				break
			}
			n, rest = c, tail
		}
	}
	return root
}

// buildTree applies the changes under n to tree old (zero: none) and
// writes the new trees. Only trees on changed paths are read or written.
// It reports empty when the resulting directory has no entries, so the
// caller drops it (git has no empty directories).
func (r *Repo) buildTree(old plumbing.Hash, n *node) (plumbing.Hash, bool, error) {
	var base []treeEntry
	if !old.IsZero() {
		var err error
		if base, err = r.readTree(old); err != nil {
			return plumbing.ZeroHash, false, err
		}
	}
	t := newTreeEdit(base, n)
	names := make([]string, 0, len(n.sub))
	for name := range n.sub {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := n.sub[name]
		cur := t.current(name)
		if c.sub != nil && (c.file == nil || c.file.Delete) {
			var oldSub plumbing.Hash
			if cur != nil && cur.isTree() {
				oldSub = cur.hash
			}
			id, empty, err := r.buildTree(oldSub, c)
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
			if empty {
				if cur != nil && cur.isTree() {
					t.set(name, nil)
				}
			} else {
				t.set(name, &treeEntry{name: name, mode: modeTree, hash: id})
			}
			continue
		}
		// A written file replaces whatever directory had its name, with
		// the changes inside it: git cannot hold both.
		p := c.file
		if p.Delete {
			if cur != nil && !cur.isTree() {
				t.set(name, nil)
			}
			continue
		}
		t.set(name, &treeEntry{name: name, mode: p.mode, hash: p.id})
	}
	entries := t.result()
	// The root is written even when empty: a commit needs a tree.
	id, err := r.writeTree(entries)
	return id, len(entries) == 0, err
}

// treeEdit is one directory's entries being changed: entries copied from
// the old tree, where each changed name sits, and whether the order can
// have changed.
type treeEdit struct {
	entries        []treeEntry
	pos            map[string]int // a changed name's index in entries, -1 when absent
	removed, added bool
}

func newTreeEdit(base []treeEntry, n *node) *treeEdit {
	t := &treeEdit{entries: make([]treeEntry, len(base), len(base)+len(n.sub)), pos: make(map[string]int, len(n.sub))}
	copy(t.entries, base)
	for name := range n.sub {
		t.pos[name] = -1
	}
	for i, e := range t.entries {
		if _, ok := t.pos[e.name]; ok {
			t.pos[e.name] = i
		}
	}
	return t
}

// current is the entry a changed name has now, or nil.
func (t *treeEdit) current(name string) *treeEntry {
	if i := t.pos[name]; i >= 0 {
		return &t.entries[i]
	}
	return nil
}

// set replaces name's entry with e, adds it, or (e nil) removes it.
func (t *treeEdit) set(name string, e *treeEntry) {
	i := t.pos[name]
	switch {
	case e == nil && i >= 0:
		t.entries[i].name = "" // marked, dropped by result
		t.removed = true
	case e != nil && i >= 0:
		if t.entries[i].isTree() != e.isTree() {
			t.added = true // a file and a directory sort differently
		}
		t.entries[i] = *e
	case e != nil:
		t.entries = append(t.entries, *e)
		t.pos[name] = len(t.entries) - 1
		t.added = true
	}
}

// result is the directory's entries in git's order.
func (t *treeEdit) result() []treeEntry {
	entries := t.entries
	if t.removed {
		kept := entries[:0]
		for _, e := range entries {
			if e.name != "" {
				kept = append(kept, e)
			}
		}
		entries = kept
	}
	if t.added {
		sortTree(entries) // only new names can be out of place
	}
	return entries
}

// Subject is the first line of a commit message, as git log --oneline and
// the reflog show it.
func Subject(msg string) string {
	msg = strings.TrimSpace(msg)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// encodeCommit renders a commit object with its parents in order (a zero
// parent, the unborn branch, is left out).
func encodeCommit(tree plumbing.Hash, parents []plumbing.Hash, who Author, when time.Time, msg string) []byte {
	var b strings.Builder
	b.WriteString("tree " + tree.String() + "\n")
	for _, p := range parents {
		if !p.IsZero() {
			b.WriteString("parent " + p.String() + "\n")
		}
	}
	ident := identLine(who, when)
	b.WriteString("author " + ident + "\n")
	b.WriteString("committer " + ident + "\n\n")
	msg = strings.TrimRight(msg, "\n")
	if strings.TrimSpace(msg) == "" {
		msg = "mindmount: update"
	}
	b.WriteString(msg + "\n")
	return []byte(b.String())
}

// identLine renders "Name <email> 1700000000 +0100", stripping the
// characters git's ident format cannot hold.
func identLine(who Author, when time.Time) string {
	clean := func(s, def string) string {
		s = strings.Map(func(r rune) rune {
			switch r {
			case '<', '>', '\n', '\r', 0:
				return -1
			}
			return r
		}, s)
		s = strings.TrimSpace(s)
		if s == "" {
			return def
		}
		return s
	}
	name := clean(who.Name, Mindmount.Name)
	email := clean(who.Email, Mindmount.Email)
	if when.IsZero() {
		when = time.Now()
	}
	_, off := when.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	tz := fmt.Sprintf("%c%02d%02d", sign, off/3600, off/60%60)
	return name + " <" + email + "> " + strconv.FormatInt(when.Unix(), 10) + " " + tz
}
