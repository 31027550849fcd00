package hooks

import (
	"strings"
	"testing"
)

// TestPickOrAppend: both sides appending lines to a part keep both; any
// other change on both sides is a conflict.
func TestPickOrAppend(t *testing.T) {
	const b = "## Fact\nThe team keeps a log.\n"
	for _, c := range []struct {
		name    string
		b, o, t string
		want    string
		ok      bool
	}{
		{"only ours", b, b + "- a\n", b, b + "- a\n", true},
		{"both append", b, b + "- a1\n- a2\n", b + "- b1\n", b + "- a1\n- a2\n- b1\n", true},
		{"the same line once", b, b + "- same\n", b + "- same\n- b\n", b + "- same\n- b\n", true},
		{"before the blank line that ends a section", b + "\n", b + "- a\n\n", b + "- b\n\n", b + "- a\n- b\n\n", true},
		{"a frontmatter list", "tags:\n  - x\n", "tags:\n  - x\n  - y\n", "tags:\n  - x\n  - z\n", "tags:\n  - x\n  - y\n  - z\n", true},
		{"one side rewrote", b, b + "- a\n", "## Fact\nThe team keeps no log.\n- b\n", "", false},
		{"both rewrote", b, "## Fact\nA.\n", "## Fact\nB.\n", "", false},
		{"blank lines only", b, b + "- a\n", b + "\n\n", "", false},
		{"empty base", "", "x\n", "y\n", "", false},
		{"after a merge interleaved them", b + "- a0\n", b + "- b0\n- a0\n- b1\n", b + "- a0\n- a1\n", b + "- b0\n- a0\n- b1\n- a1\n", true},
		{"a line cut mid-way", b, b + "- a", b + "- b\n", "", false},
	} {
		got, ok := pickOrAppend(c.b, c.o, c.t)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%s: got %q, %v; want %q, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// TestMergeMemoryBothAppend: two members appending to the same memory's
// section both land in one file, with no retired sibling.
func TestMergeMemoryBothAppend(t *testing.T) {
	ours := edit(baseMem, "You enjoy specialty coffee.\n", "You enjoy specialty coffee.\n- alice: Ethiopian\n")
	theirs := edit(baseMem, "You enjoy specialty coffee.\n", "You enjoy specialty coffee.\n- bob: Kenyan\n")
	res := mergeMemory(memoryMergeInput{Path: "user_memory/likes-coffee.md", Base: []byte(baseMem), Ours: ours, Theirs: theirs})
	if res.SiblingPath != "" {
		t.Fatalf("a sibling %s for two appends:\n%s", res.SiblingPath, res.Sibling)
	}
	if want := "## Fact\nYou enjoy specialty coffee.\n- alice: Ethiopian\n- bob: Kenyan\n\n## Episode"; !strings.Contains(string(res.Data), want) {
		t.Errorf("merged:\n%s\nwant it to hold %q", res.Data, want)
	}
}

// FuzzPickOrAppend: a clean merge of parts both sides changed, each
// differently, keeps every line of both sides.
func FuzzPickOrAppend(f *testing.F) {
	f.Add("## Fact\nx\n", "## Fact\nx\n- a\n", "## Fact\nx\n- b\n")
	f.Add("tags:\n  - x\n\n", "tags:\n  - x\n  - y\n\n", "tags:\n  - x\n")
	f.Fuzz(func(t *testing.T, b, o, th string) {
		got, ok := pickOrAppend(b, o, th)
		if !ok || o == b || th == b || o == th {
			return // pick's own cases: one side's version wins whole
		}
		for _, side := range []string{o, th} {
			for _, l := range strings.Split(side, "\n") {
				if !strings.Contains(got, l) {
					t.Fatalf("merge of %q %q %q = %q lost the line %q", b, o, th, got, l)
				}
			}
		}
	})
}
