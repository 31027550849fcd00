package recall

import (
	"slices"
	"testing"
)

// TestFieldWeightsSwapped: two memories hold the same texts in swapped
// fields, so length normalisation, term counts and the use prior are equal
// and only the field weights can order them (TestFieldWeights passed on
// length normalisation alone: issue 14's mutant list).
func TestFieldWeightsSwapped(t *testing.T) {
	a, b := "Goes sailing on the lake", "Grows tomatoes in the garden"
	t.Run("description over fact", func(t *testing.T) {
		ix := New()
		ix.Put(Doc{Path: "a.md", Active: true, Description: a, Fact: b})
		ix.Put(Doc{Path: "b.md", Active: true, Description: b, Fact: a})
		if got := paths(ix.Search("sailing", Options{})); !slices.Equal(got, []string{"a.md", "b.md"}) {
			t.Errorf("sailing: got %v, want a.md (description) before b.md (fact)", got)
		}
		if got := paths(ix.Search("tomatoes", Options{})); !slices.Equal(got, []string{"b.md", "a.md"}) {
			t.Errorf("tomatoes: got %v, want b.md (description) before a.md (fact)", got)
		}
	})
	t.Run("title over fact", func(t *testing.T) {
		ix := New()
		ix.Put(Doc{Path: "a.md", Active: true, Title: a, Fact: b})
		ix.Put(Doc{Path: "b.md", Active: true, Title: b, Fact: a})
		if got := paths(ix.Search("sailing", Options{})); !slices.Equal(got, []string{"a.md", "b.md"}) {
			t.Errorf("sailing: got %v, want a.md (title) before b.md (fact)", got)
		}
	})
	t.Run("fact over episode", func(t *testing.T) {
		ix := New()
		ix.Put(Doc{Path: "c.md", Active: true, Fact: a, Episode: b})
		ix.Put(Doc{Path: "d.md", Active: true, Fact: b, Episode: a})
		if got := paths(ix.Search("sailing", Options{})); !slices.Equal(got, []string{"c.md", "d.md"}) {
			t.Errorf("sailing: got %v, want c.md (fact) before d.md (episode)", got)
		}
		if got := paths(ix.Search("tomatoes", Options{})); !slices.Equal(got, []string{"d.md", "c.md"}) {
			t.Errorf("tomatoes: got %v, want d.md (fact) before c.md (episode)", got)
		}
	})
}
