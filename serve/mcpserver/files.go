package mcpserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph/subtree"
)

// tree reads and writes the working tree of one repository, confined to it
// by subtree: neither `..` nor a symbolic link anywhere on the way can lead
// outside, whatever a path check above missed.
type tree struct {
	t *subtree.Tree
	// fileMode and dirMode are what a new file and directory get: the
	// repository's (0600 and 0700 in a private one, as init makes it).
	fileMode, dirMode fs.FileMode
}

// errSymlink is returned for a path that runs through a symbolic link or
// out of the repository.
var errSymlink = subtree.ErrUnsafePath

// maxRead bounds what view reads: memory files are at most 64 KiB, other
// files are shown only when small.
const maxRead = 1 << 20

var errIsDir = errors.New("is a directory")

// read returns the content of the regular file rel; ok is false when it
// does not exist.
func (t tree) read(rel string) (data []byte, ok bool, err error) {
	data, err = t.t.ReadFile(rel, maxRead)
	switch {
	case err == nil:
		return data, true, nil
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, unix.ENOTDIR):
		return nil, false, nil
	case errors.Is(err, subtree.ErrTooLarge):
		return nil, false, fmt.Errorf("%s is larger than %d KiB; memory tools do not read it", rel, maxRead>>10)
	case errors.Is(err, subtree.ErrNotRegular):
		if t.isDir(rel) {
			return nil, false, errIsDir
		}
		return nil, false, fmt.Errorf("%s is not a regular file", rel)
	}
	return nil, false, err
}

// isDir reports whether rel is a directory (not through a symlink).
func (t tree) isDir(rel string) bool {
	fi, err := t.t.Lstat(rel)
	return err == nil && fi.IsDir()
}

// list returns the entries of the directory rel.
func (t tree) list(rel string) ([]os.DirEntry, error) {
	if rel == "" {
		rel = "."
	}
	return t.t.ReadDir(rel)
}

// write replaces rel with data atomically, so a reader (the mount,
// fsnotify, a cat) never sees half a file; the temp name is one the
// tracker never commits. An existing file keeps its permission bits; a
// symlink at rel is refused.
func (t tree) write(rel string, data []byte) error {
	mode := t.fileMode
	if tracker.IsInbox(rel) {
		mode = 0o600 // a transcript is private talk, as every front writes it
	}
	switch fi, err := t.t.Lstat(rel); {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return errSymlink
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("%s exists and is not a regular file", rel)
	case err == nil:
		mode = fi.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return t.t.WriteFile(rel, data, mode, false)
}

// remove deletes the file rel (never a directory, never through a link).
func (t tree) remove(rel string) error {
	if t.isDir(rel) {
		return errIsDir
	}
	return t.t.Remove(rel)
}

// rename moves the file from to to, refusing to replace anything at to.
func (t tree) rename(from, to string) error {
	if err := t.t.MkdirAll(path.Dir(to), t.dirMode); err != nil {
		return err
	}
	return t.t.Rename(from, to, unix.RENAME_NOREPLACE)
}
