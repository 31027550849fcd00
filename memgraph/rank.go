package memgraph

import (
	"slices"
	"strings"
)

// Rank orders memories: active only, pinned ones first, then by use count
// desc, then most recent use desc, then slug asc (and path, so the order
// is total). Pinned first keeps a safety fact (an allergy, a medication)
// in the index and the context however rarely it is used.
func Rank(ms []*Memory) []*Memory {
	out := make([]*Memory, 0, len(ms))
	for _, m := range ms {
		if m != nil && m.Active() {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, compareRank)
	return out
}

// compareRank is the rank order as a three-way comparison.
func compareRank(a, b *Memory) int {
	if a.Front.Pinned != b.Front.Pinned {
		if a.Front.Pinned {
			return -1
		}
		return 1
	}
	if a.Uses != b.Uses {
		if a.Uses > b.Uses {
			return -1
		}
		return 1
	}
	if c := b.LastUsed.Compare(a.LastUsed); c != 0 {
		return c
	}
	if c := strings.Compare(a.Slug(), b.Slug()); c != 0 {
		return c
	}
	return strings.Compare(a.Path, b.Path)
}
