package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mindmount/mindmount/cmd/mindmount/internal/host"
)

// requireDir turns a missing or non-directory DIR into a clear error.
func requireDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s does not exist (create a memory repository with: mindmount init %s)", dir, dir)
		}
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// requireMindmountRepo is the one test every command applies to a repository
// argument: a directory holding a git work tree (.git) and character.md or
// user.md at its top. A plain folder or a plain git repository gets the
// same error everywhere, saying how to make one; a repository made before
// the rename, saying how to upgrade it.
func requireMindmountRepo(dir string) error {
	if err := requireDir(dir); err != nil {
		return err
	}
	if err := viralHint(dir); err != nil {
		return err
	}
	if !host.IsMindmountRepo(dir) {
		return host.NotMindmountError(dir)
	}
	return host.CheckUpgraded(dir)
}

// repoOf finds the mindmount repository holding path (a file or folder inside
// it, or the repository itself) and returns its root and path relative to
// that root in slash form ("" for the root itself).
func repoOf(path string) (root, rel string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", "", fmt.Errorf("%s does not exist", path)
		}
		return "", "", err
	}
	if st.IsDir() {
		if err := viralHint(abs); err != nil {
			return "", "", err
		}
	}
	for dir := abs; ; dir = filepath.Dir(dir) {
		if host.IsMindmountRepo(dir) {
			r, err := filepath.Rel(dir, abs)
			if err != nil {
				return "", "", err
			}
			if r == "." {
				r = ""
			}
			return dir, filepath.ToSlash(r), nil
		}
		if filepath.Dir(dir) == dir {
			if st.IsDir() { // the same line as every command taking a REPO
				return "", "", host.NotMindmountError(path)
			}
			return "", "", fmt.Errorf("%s is not inside a mindmount repository: run mindmount init DIR to make one", path)
		}
	}
}
