package hooks

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mindmount/mindmount/memgraph"
)

// ErrConflict is returned by a driver that left a conflict for git to
// report (only for files that are not memories).
var ErrConflict = errors.New("merge conflict")

// CursorDriver is "mindmount merge-cursor %O %A %B": it merges the cursor
// versions in the three files and writes the result over ours, as git
// expects of a merge driver.
func CursorDriver(basePath, oursPath, theirsPath string) error {
	base, ours, theirs, err := readThree(basePath, oursPath, theirsPath)
	if err != nil {
		return err
	}
	out, err := MergeCursors(base, ours, theirs)
	if err != nil {
		return err
	}
	return os.WriteFile(oursPath, out, 0o644)
}

// MemoryDriver is "mindmount merge-memory %O %A %B %P", run by git in the
// work tree's top directory. A memory file merges with MergeMemory; on a
// real conflict ours (the version of the person running git merge) stays
// and theirs is written, retired, beside it as an untracked file, named on
// log. A file that is not a memory merges as git would (git merge-file).
func MemoryDriver(basePath, oursPath, theirsPath, rel string, log io.Writer) error {
	if !memgraph.IsMemoryPath(rel) {
		err := exec.Command("git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", oursPath, basePath, theirsPath).Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() > 0 {
			return ErrConflict
		}
		return err
	}
	base, ours, theirs, err := readThree(basePath, oursPath, theirsPath)
	if err != nil {
		return err
	}
	res := MergeMemory(MemoryMergeInput{
		Path: rel, Base: base, Ours: ours, Theirs: theirs,
		Taken: func(p string) bool {
			_, err := os.Lstat(filepath.FromSlash(p))
			return err == nil
		},
	})
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
// that does not have the path (an add/add merge has an empty base).
func readThree(b, o, t string) (base, ours, theirs []byte, err error) {
	if base, err = os.ReadFile(b); err != nil {
		return
	}
	if ours, err = os.ReadFile(o); err != nil {
		return
	}
	theirs, err = os.ReadFile(t)
	return
}
