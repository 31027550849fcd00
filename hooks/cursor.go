package hooks

import (
	"fmt"

	"github.com/mindmount/mindmount/consolidate"
)

// mergeCursors merges two versions of the consolidation cursor
// (.mindmount/cursor.json) for git: base, ours, theirs. Every transcript keeps
// the further of the two positions (consolidate.Cursor.Merge), so:
//
//   - "git revert" of an older consolidation undoes its memories but not
//     its cursor advance, and does not conflict on the cursor lines of the
//     later ones (a revert of the latest one never reaches a driver: git
//     takes the old cursor as it is; consolidate reads the cursor with a
//     floor for that case);
//   - merging the histories of two machines keeps what both consolidated.
//
// base is unused: positions only move forward.
func mergeCursors(base, ours, theirs []byte) ([]byte, error) {
	o, err := consolidate.ParseCursor(ours)
	if err != nil {
		return nil, fmt.Errorf("ours: %w", err)
	}
	t, err := consolidate.ParseCursor(theirs)
	if err != nil {
		return nil, fmt.Errorf("theirs: %w", err)
	}
	o.Merge(t)
	return o.Render(), nil
}
