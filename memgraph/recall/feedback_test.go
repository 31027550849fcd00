package recall

import (
	"slices"
	"testing"
)

// feedbackIndex holds a few memories about one family's outings and some
// about other things, so that the outings' shared words are not common.
func feedbackIndex() *Index {
	ix := New()
	for _, d := range []Doc{
		{Path: "camp-forest.md", Fact: "Went camping in the forest with the kids"},
		{Path: "camp-beach.md", Fact: "Went camping at the beach with the kids"},
		{Path: "museum.md", Fact: "Took the kids to the museum, then the beach and the forest"},
		{Path: "camping.md", Fact: "Camping"},
		{Path: "tent.md", Fact: "Camping gear: a tent, a stove, forest maps, beach towels, kids' boots and kids' hats"},
		{Path: "job.md", Fact: "Works as a nurse at the city hospital"},
		{Path: "car.md", Fact: "Drives an old blue car to work"},
		{Path: "cat.md", Fact: "Has a cat called Pixel"},
		{Path: "tea.md", Fact: "Drinks green tea in the afternoon"},
		{Path: "book.md", Fact: "Reads crime novels before sleeping"},
	} {
		d.Active = true
		ix.Put(d)
	}
	return ix
}

func withFeedback(t *testing.T, docs, pin int) {
	t.Helper()
	oldDocs, oldPin := feedbackDocs, feedbackPin
	feedbackDocs, feedbackPin = docs, pin
	t.Cleanup(func() { feedbackDocs, feedbackPin = oldDocs, oldPin })
}

// TestFeedback: the second pass finds a memory that holds none of the
// question's words but the words its best answers share; without the
// second pass it is not found; the first pass's best memory keeps first
// place however much another gains from the second pass.
func TestFeedback(t *testing.T) {
	for _, tc := range []struct {
		name      string
		docs, pin int
		q         string
		k         int
		wantIn    []string // in the results
		wantOut   []string // not in the results
		wantFirst string
	}{
		{"second pass lifts the museum", 5, 1, "where did the kids go camping", 4, []string{"museum.md"}, nil, ""},
		{"no second pass, museum below", 0, 1, "where did the kids go camping", 4, []string{"camp-forest.md"}, []string{"museum.md"}, ""},
		{"none of the question's words, not an answer", 5, 1, "camping", 10, nil, []string{"museum.md"}, ""},
		{"the first pass's best keeps its place", 5, 1, "camping", 10, nil, nil, "camping.md"},
		{"no match, no feedback", 5, 1, "violin lessons", 10, nil, []string{"museum.md", "camping.md"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withFeedback(t, tc.docs, tc.pin)
			got := paths(feedbackIndex().Search(tc.q, Options{K: tc.k}))
			for _, p := range tc.wantIn {
				if !slices.Contains(got, p) {
					t.Errorf("%q: got %v, want %s among them", tc.q, got, p)
				}
			}
			for _, p := range tc.wantOut {
				if slices.Contains(got, p) {
					t.Errorf("%q: got %v, want no %s", tc.q, got, p)
				}
			}
			if tc.wantFirst != "" && (len(got) == 0 || got[0] != tc.wantFirst) {
				t.Errorf("%q: got %v, want %s first", tc.q, got, tc.wantFirst)
			}
		})
	}
}

// TestFeedbackPinMatters: without the pin, the second pass does overturn
// the first place in feedbackIndex, so the pin case above tests the pin.
func TestFeedbackPinMatters(t *testing.T) {
	withFeedback(t, 5, 0)
	if got := paths(feedbackIndex().Search("camping", Options{})); len(got) > 0 && got[0] == "camping.md" {
		t.Fatalf("unpinned, camping.md stays first anyway (%v): the pin case would prove nothing", got)
	}
}

// TestFeedbackSecondPass: of two memories that share one question word
// ("kids"), the one that also shares a word with a memory the first
// feedback pass lifted (the museum) rises above the other with a second
// pass, not with one.
func TestFeedbackSecondPass(t *testing.T) {
	index := func() *Index {
		ix := feedbackIndex()
		for _, d := range []Doc{
			{Path: "dinosaurs.md", Fact: "The kids loved the dinosaur bones at the museum"},
			{Path: "school.md", Fact: "The kids start school soon"},
			{Path: "nap.md", Fact: "A long nap on Sunday"},
			{Path: "bones.md", Fact: "Dinosaur bones on the news"},
		} {
			d.Active = true
			ix.Put(d)
		}
		return ix
	}
	// Seeds weighted linearly: in this small index the museum memory the
	// first pass lifts ranks far below the best seed, and at the default
	// sharpness its words weigh too little to show the second pass.
	old, oldSharp := feedbackPasses, feedbackSharpness
	feedbackSharpness = 1
	t.Cleanup(func() { feedbackPasses, feedbackSharpness = old, oldSharp })
	for _, tc := range []struct {
		passes int
		want   bool
	}{{1, false}, {2, true}} {
		feedbackPasses = tc.passes
		got := paths(index().Search("where did the kids go camping", Options{K: 20}))
		d, s := slices.Index(got, "dinosaurs.md"), slices.Index(got, "school.md")
		if d < 0 || s < 0 || (d < s) != tc.want {
			t.Errorf("%d feedback passes: got %v, want dinosaurs.md above school.md: %v", tc.passes, got, tc.want)
		}
	}
}
