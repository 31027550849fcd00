package tracker

import (
	"path"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/memgraph"
)

// validMemoryName reports whether base names a memory file in a memory
// folder: a valid slug plus ".md".
func validMemoryName(base string) bool {
	slug, ok := strings.CutSuffix(base, ".md")
	return ok && memgraph.ValidSlug(slug)
}

// FuzzIsScratchProperties gives FuzzIsScratch (which only checks for panics)
// properties, so a mutant in the temp rule is caught (issue 14): a temp
// name is never a valid memory name and a valid memory name is never temp;
// the rule looks at the base name only; and a slug made from any text is
// never temp once it is a memory file.
func FuzzIsScratchProperties(f *testing.F) {
	for _, s := range []string{"a/.b.swp", "4913", "sedAAAAAA", "x~", "", "/", "likes-tea.md", "sed-notes.md", "4913.md", "#a#", ".#x", "a.tmp", "5036"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		base := path.Base(s)
		temp := IsScratch(s)
		if temp && validMemoryName(base) {
			t.Fatalf("IsScratch(%q): a valid memory name is temp", s)
		}
		if temp != IsScratch("user_memory/"+base) || temp != IsScratch(base) {
			t.Fatalf("IsScratch(%q) depends on more than the base name", s)
		}
		if slug := memgraph.Slug(s); IsScratch("user_memory/" + slug + ".md") {
			t.Fatalf("the memory made from %q (%s.md) counts as temp", s, slug)
		}
	})
}

// TestTempNamesAreNotMemories pins the property on the names the tools
// really produce.
func TestTempNamesAreNotMemories(t *testing.T) {
	for _, n := range []string{".likes-tea.md.swp", "likes-tea.md~", ".#likes-tea.md", "#likes-tea.md#", "sedAb12Cd", "4913", "x.tmp", ".goutputstream-ABC"} {
		if !IsScratch(n) || validMemoryName(n) {
			t.Errorf("%q: temp %v, memory name %v", n, IsScratch(n), validMemoryName(n))
		}
	}
	for _, n := range []string{"likes-tea.md", "sed-notes.md", "4913.md", "sedative.md", "tmp.md"} {
		if IsScratch(n) || !validMemoryName(n) {
			t.Errorf("%q: temp %v, memory name %v", n, IsScratch(n), validMemoryName(n))
		}
	}
}
