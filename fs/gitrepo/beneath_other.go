//go:build !linux

package gitrepo

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// beneathFS is the portable fallback of the Linux openat2 version: it
// checks each directory on the way with Lstat. A racing swap of a directory
// for a link between check and use is not excluded here.
type beneathFS struct {
	root string
	perm fs.FileMode
}

func (r *Repo) beneath() (*beneathFS, error) { return &beneathFS{root: r.dir, perm: r.dirPerm()}, nil }

func (b *beneathFS) close()               {}
func (b *beneathFS) flush([]string) error { return nil }

func (b *beneathFS) dir(rel string, create bool) (string, error) {
	cur := b.root
	if rel == "." {
		return cur, nil
	}
	for _, c := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if os.IsNotExist(err) && create {
			if err := os.Mkdir(cur, b.perm); err != nil && !os.IsExist(err) {
				return "", err
			}
			continue
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%s: %w", rel, ErrUnsafePath)
		}
	}
	return cur, nil
}

func (b *beneathFS) write(rel string, data []byte, perm fs.FileMode, _ bool) error {
	d, err := b.dir(path.Dir(rel), true)
	if err != nil {
		return err
	}
	// No batched flush here: every file is synced.
	return atomicfile.WriteFile(filepath.Join(d, path.Base(rel)), data, perm)
}

func (b *beneathFS) remove(rel string) error {
	d, err := b.dir(path.Dir(rel), false)
	if err != nil {
		return nil
	}
	if err := os.Remove(filepath.Join(d, path.Base(rel))); err != nil && !os.IsNotExist(err) {
		return err
	}
	removeEmptyParents(rel, func(dir string) error { return os.Remove(filepath.Join(b.root, dir)) })
	return nil
}
