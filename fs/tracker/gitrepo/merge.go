package gitrepo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrDirty is returned by Merge when a file the merge would write differs in
// the work tree from HEAD: an uncommitted (or invalid, held back) local
// edit that the merge must not overwrite. Nothing was written.
var ErrDirty = errors.New("uncommitted change in the work tree")

// MergeCommit describes the commit Merge makes.
type MergeCommit struct {
	// Ours is the commit the merge was computed against; it must still be
	// HEAD, else Merge returns ErrRefMoved and changes nothing.
	Ours string
	// Theirs is the other parent (the fetched remote branch).
	Theirs string
	// Changes turn Ours' tree into the merged tree; they are written to
	// the work tree too.
	Changes []Change
	// FastForward moves the branch to Theirs instead of making a commit;
	// Changes must then turn Ours' tree into exactly Theirs' tree.
	FastForward bool
	Message     string
	Author      Author
	When        time.Time
}

// GitDir returns the absolute git directory: .git, or where a .git file
// points.
func (r *Repo) GitDir() string { return r.gitDir }

// Merge records a merge made outside git's own machinery (go-git has no
// merge): under the commit lock — so no tracker or consolidation commit
// interleaves — it checks that HEAD is still m.Ours and that every path it
// is about to write is unchanged in the work tree, writes the files, and
// commits one commit with the two parents (or fast-forwards). The index
// entries of the written paths are updated so "git status" stays clean.
func (r *Repo) Merge(m MergeCommit) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	changes, err := normalize(m.Changes)
	if err != nil {
		return "", err
	}
	lock, err := r.lockIndex()
	if err != nil {
		return "", err
	}
	defer func() {
		if lock != nil {
			r.unlockIndex(lock)
		}
	}()
	h, err := r.readHeadRef()
	if err != nil {
		return "", err
	}
	if h.commit != plumbing.NewHash(m.Ours) {
		return "", fmt.Errorf("%w: HEAD is %s, the merge was computed on %s", ErrRefMoved, h.commit, m.Ours)
	}
	todo := make([]pending, len(changes))
	for i, c := range changes {
		if err := r.checkClean(h.tree, c.Path); err != nil {
			return "", err
		}
		todo[i] = pendingOf(c)
	}
	for _, del := range []bool{true, false} {
		for _, c := range changes {
			if c.Delete == del {
				if err := r.writeWorktree(c); err != nil {
					return "", err
				}
			}
		}
	}
	theirs := plumbing.NewHash(m.Theirs)
	id := theirs
	if !m.FastForward {
		root, err := r.writeChanges(h.tree, todo)
		if err != nil {
			return "", err
		}
		id, err = r.writeObject("commit", encodeMerge(root, h.commit, theirs, m.Author, m.When, m.Message))
		if err != nil {
			return "", err
		}
	}
	if err := r.casRef(h.name, h.commit, id, m.Author, m.When, Subject(m.Message)); err != nil {
		if errors.Is(err, errRefChanged) {
			return "", fmt.Errorf("%w: %s", ErrRefMoved, h.name)
		}
		return "", fmt.Errorf("update %s: %w", h.name, err)
	}
	taken, err := r.settleIndex(lock, todo, todo)
	if taken {
		lock = nil
	}
	if err != nil {
		return "", err
	}
	return id.String(), nil
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
	data, rerr := os.ReadFile(filepath.Join(r.dir, filepath.FromSlash(rel)))
	switch {
	case rerr != nil && !ok && (errors.Is(rerr, os.ErrNotExist) || isDirErr(rerr)):
		return nil
	case rerr != nil && errors.Is(rerr, os.ErrNotExist):
		return fmt.Errorf("%w: %s (deleted)", ErrDirty, rel)
	case rerr != nil && isDirErr(rerr):
		return fmt.Errorf("%w: %s (a directory)", ErrDirty, rel)
	case rerr != nil:
		return rerr
	case !ok || hashObject("blob", data) != e.hash:
		return fmt.Errorf("%w: %s", ErrDirty, rel)
	}
	return nil
}

// isDirErr reports whether err is reading a directory as a file (EISDIR).
func isDirErr(err error) bool {
	return errors.Is(err, syscall.EISDIR)
}

// encodeMerge renders a commit object with two parents.
func encodeMerge(tree, ours, theirs plumbing.Hash, who Author, when time.Time, msg string) []byte {
	one := encodeCommit(tree, ours, who, when, msg)
	// encodeCommit wrote "tree …\nparent <ours>\n": the second parent
	// follows the first, as git writes them.
	at := len("tree ") + 40 + 1 + len("parent ") + 40 + 1
	out := make([]byte, 0, len(one)+48)
	out = append(out, one[:at]...)
	out = append(out, "parent "+theirs.String()+"\n"...)
	return append(out, one[at:]...)
}
