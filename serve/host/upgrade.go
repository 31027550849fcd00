package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mindmount/mindmount/memgraph"
)

// LegacyStateDir is the state folder of a repository made before the
// rename (memgraph.LegacyStateDir).
const LegacyStateDir = memgraph.LegacyStateDir

// ErrNotUpgraded means a repository was made before the rename and has not
// been upgraded yet: serving it would ignore its cursor and settings (the
// transcripts it consolidated would be consolidated again).
var ErrNotUpgraded = errors.New("made before the rename (it has .engram/)")

// CheckUpgraded returns ErrNotUpgraded, with the command that fixes it,
// while dir still holds the old state folder.
func CheckUpgraded(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, LegacyStateDir)); err != nil {
		return nil
	}
	return fmt.Errorf("%s was %w: run \"mindmount init %s\" once to upgrade it", dir, ErrNotUpgraded, dir)
}
