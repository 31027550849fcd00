package migrate

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/mindmount/mindmount/memgraph"
)

// ErrSymlink refuses a memory file of the source that is a symbolic link:
// an import copies regular files only, so that a link cannot carry a file
// from outside the folder the user named (another user's notes, a system
// file) into a repository.
var ErrSymlink = errors.New("a symbolic link, not a regular file: an import copies regular files only (copy the file in its place)")

// ErrControlName refuses a source name holding control characters (a
// newline, say): such a name would forge lines wherever it is printed,
// commit messages among them.
var ErrControlName = errors.New("the name holds control characters: rename it first")

// sourceProblem is the refusal of the source path rel (its name shown
// escaped), or nil.
func sourceProblem(rel string, err error) error {
	return fmt.Errorf("%s: %w", memgraph.SafeLine(rel), err)
}

// hasControl reports whether s holds a control character.
func hasControl(s string) bool { return strings.IndexFunc(s, memgraph.IsControl) >= 0 }

// wanted says whether the entry e of dir is a markdown file to import: a
// regular ".md" file whose name does not start with a dot. A markdown
// name that is a symbolic link, and any name with control characters,
// are refused.
func wanted(dir string, e fs.DirEntry) (bool, error) {
	name := e.Name()
	rel := path.Join(dir, name)
	if hasControl(name) {
		return false, sourceProblem(rel, ErrControlName)
	}
	if !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") {
		return false, nil
	}
	if e.Type()&fs.ModeSymlink != 0 {
		return false, sourceProblem(rel, ErrSymlink)
	}
	return e.Type().IsRegular(), nil
}

// regularFile says whether name is a regular file of fsys, without
// following a symbolic link: a link is refused (ErrSymlink), a missing
// file is false.
func regularFile(fsys fs.FS, name string) (bool, error) {
	st, err := fs.Lstat(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return false, sourceProblem(name, ErrSymlink)
	}
	return st.Mode().IsRegular(), nil
}
