package harness

import (
	"os"
	"path"
	"path/filepath"

	"github.com/mindmount/mindmount/memgraph/subtree"
)

// openBeneath opens rel (slash-separated, inside root) with flags, creating
// the missing parent directories of rel first when create is set. No "..",
// no absolute path, no symlink on the way: a symlink planted at
// transcripts/ or at the file itself would otherwise redirect an append
// outside the repository (see subtree). It works the same on a plain
// repository and through a mount.
func openBeneath(root, rel string, flags int, perm uint32, create bool) (*os.File, error) {
	rel = filepath.ToSlash(rel)
	if err := subtree.Clean(rel); err != nil {
		return nil, err
	}
	t, err := subtree.Open(root)
	if err != nil {
		return nil, err
	}
	defer t.Close()
	if create {
		if err := t.MkdirAll(path.Dir(rel), 0o700); err != nil {
			return nil, err
		}
	}
	return t.OpenFile(rel, flags, os.FileMode(perm))
}
