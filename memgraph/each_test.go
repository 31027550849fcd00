package memgraph

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestEachRanked: the active memories of one kind, or of both, come in
// Rank's order with their rank, the others after with rank 0; blocks and
// other kinds never.
func TestEachRanked(t *testing.T) {
	files := map[string]string{
		"character.md":                 "# Character\n\nYou are brief.\n",
		"user_memory/pinned.md":        strings.Replace(mem("", "Pinned", "", "f"), "---\ndescription:", "---\npinned: true\ndescription:", 1),
		"user_memory/b.md":             mem("", "b", "", "f", "01.01.26", "02.01.26"),
		"user_memory/a.md":             mem("", "a", "", "f", "01.01.26", "02.01.26"),
		"user_memory/recent.md":        mem("", "recent", "", "f", "01.01.26", "05.01.26"),
		"user_memory/none.md":          mem("", "none", "", "f"),
		"user_memory/old.md":           mem("", "old", "contradicted", "f", "01.01.26", "02.01.26", "03.01.26"),
		"character_memory/brief.md":    mem("", "brief", "", "f", "01.01.26", "02.01.26", "03.01.26"),
		"character_memory/warm.md":     mem("", "warm", "", "f", "04.01.26"),
		"character_memory/retired.md":  mem("", "retired", "retracted", "f"),
		"projects/notes.md":            "---\ndescription: notes\n---\n# Notes\n",
		"user_memory/z-superseded.md":  mem("", "z", "superseded", "f", "01.01.26"),
		"character_memory/a-equal.md":  mem("", "a equal", "", "f", "01.01.26", "02.01.26"),
		"character_memory/recent-2.md": mem("", "recent 2", "", "f", "01.01.26", "05.01.26"),
	}
	g, err := Scan(writeRepo(t, files))
	if err != nil {
		t.Fatal(err)
	}
	// A change after the scan keeps the lists in order as the graph
	// updates them one memory at a time.
	g.Put("user_memory/b.md", []byte(mem("", "b", "", "f", "01.01.26", "02.01.26", "06.01.26")))
	for _, kinds := range [][]Kind{{KindUser}, {KindCharacter}, {KindUser, KindCharacter}, {KindCharacter, KindUser, KindBlock}} {
		var all []*Memory
		for _, k := range kinds {
			if k != KindBlock {
				all = append(all, g.Memories(k)...)
			}
		}
		var want, wantOthers []string
		for i, m := range Rank(all) {
			want = append(want, fmt.Sprintf("%d %s", i+1, m.Path))
		}
		for _, m := range all {
			if !m.Active() {
				wantOthers = append(wantOthers, "0 "+m.Path)
			}
		}
		var got, others []string
		g.EachRanked(func(m *Memory, rank int) {
			if rank == 0 {
				others = append(others, "0 "+m.Path)
			} else {
				got = append(got, fmt.Sprintf("%d %s", rank, m.Path))
			}
		}, kinds...)
		slices.Sort(others)
		slices.Sort(wantOthers)
		if !slices.Equal(got, want) || !slices.Equal(others, wantOthers) {
			t.Errorf("kinds %v:\ngot  %q %q\nwant %q %q", kinds, got, others, want, wantOthers)
		}
	}
}
