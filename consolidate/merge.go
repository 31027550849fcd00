package consolidate

import "fmt"

// MergeCursors merges two versions of the cursor file for git (a merge
// driver: base, ours, theirs). Every transcript keeps the further of the
// two positions, so:
//
//   - "git revert" of a consolidation commit undoes its memories but not
//     its cursor advance: the reverted messages are not consolidated again
//     (which would bring the memory straight back), and reverting an older
//     consolidation does not conflict on the cursor line of later ones;
//   - merging the histories of two machines keeps what both consolidated.
//
// base is unused: positions only move forward. When both sides stopped at
// the same count with different hashes (the transcript was rewritten on one
// side), ours wins.
func MergeCursors(base, ours, theirs []byte) ([]byte, error) {
	o, err := ParseCursor(ours)
	if err != nil {
		return nil, fmt.Errorf("ours: %w", err)
	}
	t, err := ParseCursor(theirs)
	if err != nil {
		return nil, fmt.Errorf("theirs: %w", err)
	}
	for rel, te := range t.Transcripts {
		if oe, ok := o.Transcripts[rel]; !ok || te.Messages > oe.Messages {
			o.Transcripts[rel] = te
		}
	}
	if o.Last == nil {
		o.Last = t.Last
	}
	return o.Render(), nil
}
