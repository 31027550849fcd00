package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mindmount/mindmount/memgraph"
)

// CursorDriver is "mindmount merge-cursor %O %A %B": MemoryDriver for the
// consolidation cursor (memgraph.CursorFile).
func CursorDriver(basePath, oursPath, theirsPath string) error {
	return MemoryDriver(basePath, oursPath, theirsPath, memgraph.CursorFile, io.Discard)
}

// MemoryDriver is "mindmount merge-memory %O %A %B %P", run by git in the
// work tree's top directory: MergeFile's rule for the path, written over
// ours as git expects of a merge driver. On a memory's real conflict ours
// (the version of the person running git merge) stays and theirs is
// written, retired, beside it as an untracked file, named on log. A
// conflict no rule merges leaves git's markers in ours and returns
// ErrConflict for git to report.
func MemoryDriver(basePath, oursPath, theirsPath, rel string, log io.Writer) error {
	base, ours, theirs, err := readThree(basePath, oursPath, theirsPath)
	if err != nil {
		return err
	}
	res, err := MergeFile(MergeInput{
		Path: rel, Base: base, Ours: ours, Theirs: theirs,
		Taken: func(p string) bool {
			_, err := os.Lstat(filepath.FromSlash(p))
			return err == nil
		},
	})
	if err != nil {
		if res.Data != nil && !bytes.Equal(res.Data, ours) {
			if werr := os.WriteFile(oursPath, res.Data, 0o644); werr != nil {
				return werr
			}
		}
		return err
	}
	if res.Sibling != nil {
		if err := os.MkdirAll(filepath.Dir(filepath.FromSlash(res.SiblingPath)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.FromSlash(res.SiblingPath), res.Sibling, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(log, "mindmount: %s changed on both sides; kept yours, and theirs as %s (status: superseded). Add it: git add %s\n",
			rel, res.SiblingPath, res.SiblingPath)
	}
	return os.WriteFile(oursPath, res.Data, 0o644)
}

// readThree reads a driver's files; git passes an empty file for a side
// that does not have the path (an add/add merge has an empty base). A
// missing base file is no common ancestor.
func readThree(b, o, t string) (base, ours, theirs []byte, err error) {
	if base, err = os.ReadFile(b); errors.Is(err, fs.ErrNotExist) {
		base, err = nil, nil // no common ancestor
	}
	if err != nil {
		return
	}
	if ours, err = os.ReadFile(o); err != nil {
		return
	}
	theirs, err = os.ReadFile(t)
	return
}
