package recall

import (
	"fmt"
	"slices"
	"testing"
)

func doc(path, title, desc, fact string) Doc {
	return Doc{Path: path, Kind: "user", Title: title, Description: desc, Fact: fact, Active: true}
}

func paths(hs []Hit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.Path
	}
	return out
}

func sampleIndex() *Index {
	ix := New()
	ix.Put(doc("user_memory/has-dog-pixel.md", "Has Dog Pixel", "Has a beagle called Pixel", "You have a beagle named Pixel. Pixel is four years old."))
	ix.Put(doc("user_memory/allergic-to-peanuts.md", "Allergic To Peanuts", "Severe peanut allergy", "You are allergic to peanuts and carry an epipen."))
	ix.Put(doc("user_memory/likes-coffee.md", "Likes Coffee", "Enjoys specialty coffee", "You enjoy specialty coffee, especially Ethiopian single origin."))
	ix.Put(Doc{Path: "user_memory/likes-tea.md", Kind: "user", Title: "Likes Tea", Description: "Drinks green tea every morning",
		Fact: "You drink green tea every morning.", Status: "superseded"})
	ix.Put(Doc{Path: "character_memory/be-brief.md", Kind: "character", Title: "Be Brief", Description: "Keep answers short",
		Fact: "Keep answers short; the user dislikes long coffee-break essays.", Active: true})
	ix.Put(Doc{Path: "user_memory/drinks-tea.md", Kind: "user", Title: "Drinks Tea Now", Description: "Switched from coffee to green tea",
		Fact: "You stopped drinking coffee and now drink green tea.", Active: true, Uses: 3})
	return ix
}

func TestSearchRanking(t *testing.T) {
	ix := sampleIndex()
	tests := []struct {
		q     string
		opt   Options
		first string
		want  []string // exact path list when non-nil
	}{
		{q: "what is my dog called", first: "user_memory/has-dog-pixel.md"},
		{q: "Pixel", first: "user_memory/has-dog-pixel.md"},
		{q: "allergies", first: "user_memory/allergic-to-peanuts.md"},
		{q: "ALLERGIC reactions", first: "user_memory/allergic-to-peanuts.md"},
		{q: "peanut", first: "user_memory/allergic-to-peanuts.md"},
		{q: "ethiopian", want: []string{"user_memory/likes-coffee.md"}},
		{q: "green tea", want: []string{"user_memory/drinks-tea.md"}},
		{q: "green tea", opt: Options{All: true}, want: []string{"user_memory/drinks-tea.md", "user_memory/likes-tea.md"}},
		{q: "coffee", opt: Options{Kind: "character"}, want: []string{"character_memory/be-brief.md"}},
		{q: "coffee", opt: Options{K: 1}, first: "user_memory/likes-coffee.md", want: []string{"user_memory/likes-coffee.md"}},
		{q: "", want: []string{}},
		{q: "the and of", want: []string{}},
		{q: "zebra", want: []string{}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%+v", tt.q, tt.opt), func(t *testing.T) {
			got := paths(ix.Search(tt.q, tt.opt))
			if tt.first != "" && (len(got) == 0 || got[0] != tt.first) {
				t.Errorf("first = %v, want %s", got, tt.first)
			}
			if tt.want != nil && !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFieldWeights(t *testing.T) {
	ix := New()
	ix.Put(doc("a.md", "", "", "Mentions sailing once in a long fact about weekends and other plans."))
	ix.Put(doc("b.md", "Sailing", "Goes sailing", "Spends summers on the water."))
	ix.Put(Doc{Path: "c.md", Active: true, Episode: "We talked about sailing during a call."})
	got := paths(ix.Search("sailing", Options{}))
	if want := []string{"b.md", "a.md", "c.md"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v (title/description > fact > episode)", got, want)
	}
}

func TestUsePrior(t *testing.T) {
	ix := New()
	ix.Put(Doc{Path: "a.md", Active: true, Fact: "likes jazz"})
	ix.Put(Doc{Path: "b.md", Active: true, Fact: "likes jazz", Uses: 10})
	if got := paths(ix.Search("jazz", Options{})); !slices.Equal(got, []string{"b.md", "a.md"}) {
		t.Errorf("got %v: the more used memory should win a tie", got)
	}
	// The prior is mild: a much better match beats many uses.
	ix.Put(Doc{Path: "c.md", Active: true, Title: "Jazz", Description: "Loves jazz", Fact: "likes jazz", Uses: 0})
	if got := paths(ix.Search("jazz", Options{})); got[0] != "c.md" {
		t.Errorf("got %v, want c.md first", got)
	}
}

func TestLifecycle(t *testing.T) {
	for _, status := range []string{"superseded", "retracted", "contradicted"} {
		t.Run(status, func(t *testing.T) {
			ix := New()
			ix.Put(Doc{Path: "old.md", Kind: "user", Title: "Lives in Berlin", Description: "Lives in Berlin", Fact: "You live in Berlin, Berlin, Berlin.", Status: status})
			ix.Put(Doc{Path: "new.md", Kind: "user", Title: "Moved", Description: "Moved to Lisbon", Fact: "You moved from Berlin to Lisbon.", Active: true})
			if got := paths(ix.Search("Berlin", Options{})); !slices.Equal(got, []string{"new.md"}) {
				t.Errorf("default: got %v", got)
			}
			got := ix.Search("Berlin", Options{All: true})
			if len(got) != 2 || got[0].Path != "old.md" || got[0].Status != status {
				t.Errorf("All: got %+v", got)
			}
		})
	}
}

func TestPutReplaceAndDelete(t *testing.T) {
	ix := New()
	ix.Put(doc("a.md", "Cats", "Has two cats", "You have two cats."))
	ix.Put(doc("b.md", "Dogs", "Has a dog", "You have a dog."))
	ix.Put(doc("a.md", "Birds", "Has a parrot", "You have a parrot named Kiwi."))
	if got := ix.Search("cats", Options{}); len(got) != 0 {
		t.Errorf("old text still indexed: %v", paths(got))
	}
	if got := paths(ix.Search("parrot", Options{})); !slices.Equal(got, []string{"a.md"}) {
		t.Errorf("parrot: %v", got)
	}
	ix.Delete("a.md")
	ix.Delete("missing.md")
	if got := ix.Search("parrot kiwi", Options{}); len(got) != 0 {
		t.Errorf("deleted doc returned: %v", paths(got))
	}
	if ix.Len() != 1 {
		t.Errorf("Len = %d", ix.Len())
	}
	// Freed ids are reused and postings stay consistent.
	for i := range 50 {
		ix.Put(doc(fmt.Sprintf("n%d.md", i), "Dog", "dog", "dog dog"))
	}
	for i := 0; i < 50; i += 2 {
		ix.Delete(fmt.Sprintf("n%d.md", i))
	}
	if got := ix.Search("dog", Options{K: 100}); len(got) != 26 {
		t.Errorf("dog hits = %d, want 26", len(got))
	}
	ix.checkInvariants(t)
}

// checkInvariants verifies postings and per-doc positions agree.
func (ix *Index) checkInvariants(t *testing.T) {
	t.Helper()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := 0
	for term, ps := range ix.postings {
		for i, p := range ps {
			e := ix.byID[p.doc]
			if e == nil {
				t.Fatalf("posting of %q points to freed id %d", term, p.doc)
			}
			k, ok := slices.BinarySearch(e.terms, term)
			if !ok || e.pos[k] != int32(i) {
				t.Fatalf("pos of %q in %s wrong: %v", term, e.doc.Path, ok)
			}
			n++
		}
	}
	m := 0
	for _, e := range ix.byPath {
		m += len(e.pos)
	}
	if n != m {
		t.Fatalf("%d postings, %d doc terms", n, m)
	}
}

func TestSnippet(t *testing.T) {
	d := Doc{Description: "Pet owner", Fact: "You have a beagle. Pixel, your beagle, is four years old. You walk daily."}
	if got := snippet(d, Terms("how old is Pixel")); got != "Pixel, your beagle, is four years old." {
		t.Errorf("snippet = %q", got)
	}
	if got := snippet(d, Terms("owner")); got != "Pet owner" {
		t.Errorf("snippet from description = %q", got)
	}
	d2 := Doc{Description: "Severe peanut allergy", Fact: "You carry an EpiPen. You are allergic to peanuts."}
	if got := snippet(d2, Terms("allergies")); got != "You are allergic to peanuts." {
		t.Errorf("snippet by variant = %q", got)
	}
	if got := snippet(d, Terms("zebra")); got != "You have a beagle." {
		t.Errorf("fallback snippet = %q", got)
	}
}

func FuzzQuery(f *testing.F) {
	ix := sampleIndex()
	for _, s := range []string{"", "dog", "allergies?", "Café", "\xff\xfe", "a.b.c", "東京", "user's", string(make([]byte, 300))} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		hs := ix.Search(q, Options{K: 3, All: len(q)%2 == 0})
		if len(hs) > 3 {
			t.Fatalf("%d hits for K=3", len(hs))
		}
		for i := 1; i < len(hs); i++ {
			if hs[i].Score > hs[i-1].Score {
				t.Fatalf("not sorted: %v", hs)
			}
		}
		// Indexing arbitrary text must not break the index either.
		ix2 := New()
		ix2.Put(Doc{Path: "x.md", Active: true, Title: q, Fact: q})
		ix2.Search(q, Options{})
		ix2.Delete("x.md")
		ix2.checkInvariants(t)
	})
}

func TestVariants(t *testing.T) {
	ix := New()
	ix.Put(doc("climb.md", "Bouldering", "Goes bouldering", "You go to a climbing gym."))
	ix.Put(doc("allergic.md", "Reaction", "Reacts to shellfish", "You are allergic to shellfish."))
	ix.Put(doc("card.md", "Cardio", "Cardio", "Cardio twice a week."))
	tests := []struct {
		q    string
		want []string
	}{
		{"climber", []string{"climb.md"}},
		{"allergies", []string{"allergic.md"}},
		{"allergy", []string{"allergic.md"}},
		// Too short to be a variant: "car" is not "cardio".
		{"car", []string{}},
		// Prefix relation but too different in length.
		{"cardiovascular", []string{}},
	}
	for _, tt := range tests {
		if got := paths(ix.Search(tt.q, Options{})); !slices.Equal(got, tt.want) {
			t.Errorf("%q: got %v, want %v", tt.q, got, tt.want)
		}
	}
	// An exact stem match outranks a variant match.
	ix.Put(doc("climber.md", "Climber", "A climber", "A climber."))
	if got := paths(ix.Search("climber", Options{})); len(got) != 2 || got[0] != "climber.md" {
		t.Errorf("exact vs variant: %v", got)
	}
}
