package gitrepo

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Reading history beside HEAD: a consolidation's dream works against a
// pinned commit and on a branch of its own, and review lists those
// branches. Nothing here moves a ref.

// ReadAt returns the content of rel in commit ("" means HEAD). ok is false
// when the commit has no file there.
func (r *Repo) ReadAt(commit, rel string) (data []byte, ok bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tree, err := r.treeOf(commit, true)
	if err != nil || tree.IsZero() {
		return nil, false, err
	}
	e, ok, err := r.lookup(tree, rel)
	if err != nil || !ok || e.isTree() || e.mode == modeGitlink {
		return nil, false, err
	}
	b, err := r.readObject(plumbing.BlobObject, e.hash)
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// ExecAt reports whether commit ("" means HEAD) has a regular file at rel
// and whether git records it executable (mode 100755): a merge of a
// branch carries the bit of the side that changed the file.
func (r *Repo) ExecAt(commit, rel string) (exec, ok bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tree, err := r.treeOf(commit, true)
	if err != nil || tree.IsZero() {
		return false, false, err
	}
	e, ok, err := r.lookup(tree, rel)
	if err != nil || !ok || e.isTree() || e.mode == modeGitlink {
		return false, false, err
	}
	return e.mode == modeExec, true, nil
}

// Branches returns the branches whose names start with prefix (without
// "refs/heads/"), each with the commit it points to.
func (r *Repo) Branches(prefix string) (map[string]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	it, err := r.store.IterReferences()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	err = it.ForEach(func(ref *plumbing.Reference) error {
		name, ok := strings.CutPrefix(ref.Name().String(), "refs/heads/")
		if ok && strings.HasPrefix(name, prefix) && ref.Type() == plumbing.HashReference {
			out[name] = ref.Hash().String()
		}
		return nil
	})
	if err == storer.ErrStop {
		err = nil
	}
	return out, err
}
