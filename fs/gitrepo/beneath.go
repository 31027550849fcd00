package gitrepo

import (
	"fmt"
	"io/fs"
	"path"

	"github.com/mindmount/mindmount/memgraph/subtree"
)

// ErrUnsafePath is returned when a write mindmount makes itself would leave
// the work tree or pass through a symbolic link (a memory folder replaced
// by a link to /etc, say). Such a write is refused, never followed.
var ErrUnsafePath = subtree.ErrUnsafePath

// WriteFile replaces the work tree file rel (repo-relative, '/') with data,
// atomically (a temp file in the same directory, then a rename) and
// symlink-safe: every directory on the way is resolved beneath the work
// tree root without following a symbolic link (openat2 with
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS), missing ones are created, and a
// symbolic link at rel itself is replaced, not followed. Exec makes the
// file executable. The data is on stable storage when WriteFile returns.
//
// It is the one way mindmount writes files of its own into a repository:
// consolidation (through Apply), watch mode's synthesized files, recovery.
// It does not commit; see Apply for write-and-commit.
func (r *Repo) WriteFile(rel string, data []byte, exec bool) error {
	return r.inWorktree("write", rel, func(b *beneathFS, rel string) error {
		return b.write(rel, data, r.filePerm(exec), true)
	})
}

// WriteDerived is WriteFile without the flush, for files mindmount derives
// and can always write again (watch mode's indexes, CONTEXT.md, status):
// symlink-safe and atomic, not durable.
func (r *Repo) WriteDerived(rel string, data []byte) error {
	return r.inWorktree("write", rel, func(b *beneathFS, rel string) error {
		return b.write(rel, data, r.filePerm(false), false)
	})
}

// RemoveFile removes the work tree file rel (symlink-safe like WriteFile)
// and then the directories it left empty, as git does. A missing file is
// not an error.
func (r *Repo) RemoveFile(rel string) error {
	return r.inWorktree("remove", rel, func(b *beneathFS, rel string) error {
		return b.remove(rel)
	})
}

// inWorktree checks rel (CheckPath) and runs fn on it with the work tree
// opened beneath its root; a failure of fn is reported as "op rel: err".
func (r *Repo) inWorktree(op, rel string, fn func(b *beneathFS, rel string) error) error {
	if err := CheckPath(rel); err != nil {
		return err
	}
	b, err := r.beneath()
	if err != nil {
		return err
	}
	defer b.close()
	if err := fn(b, rel); err != nil {
		return fmt.Errorf("%s %s: %w", op, rel, err)
	}
	return nil
}

// filePerm is the mode of a file mindmount writes: private (0600/0700) when
// the repository is (see Private), else 0644/0755.
func (r *Repo) filePerm(exec bool) fs.FileMode {
	perm := fs.FileMode(0o644)
	if exec {
		perm = 0o755
	}
	if r.private {
		perm &^= 0o077
	}
	return perm
}

// dirPerm is the mode of a directory mindmount creates.
func (r *Repo) dirPerm() fs.FileMode {
	if r.private {
		return 0o700
	}
	return 0o755
}

// removeEmptyParents climbs from rel's directory towards the root removing
// directories that are empty; the first one that is not ends the climb.
func removeEmptyParents(rel string, rmdir func(dir string) error) {
	for d := path.Dir(rel); d != "." && d != "/"; d = path.Dir(d) {
		if rmdir(d) != nil {
			return
		}
	}
}

// writeWorktree puts one change into the work tree (WriteFile or
// RemoveFile): symlink-safe, atomic, durable.
func (r *Repo) writeWorktree(c Change) error {
	if c.Delete {
		return r.RemoveFile(c.Path)
	}
	return r.WriteFile(c.Path, c.Data, c.Exec)
}
