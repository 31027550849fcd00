package consolidate

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

func TestCleanKeywords(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"words", []string{"food", "Eat", "MEAT"}, []string{"food", "eat", "meat"}},
		{"phrases split, stop words dropped", []string{"lives in", "Home-City"}, []string{"lives", "home", "city"}},
		{"repeats once", []string{"food", "Food", "food court"}, []string{"food", "court"}},
		{"accents folded as recall reads them", []string{"Café"}, []string{"cafe"}},
		{"one letter, digits and long words dropped", []string{"a", "1234", strings.Repeat("x", MaxKeyword+1), "b12", "hunter2", "a1b2c3d4e5f6", "ok"}, []string{"ok"}},
		{"a term holding a secret gives nothing", []string{"password: hunterfoo", "food"}, []string{"food"}},
		{"capped", []string{"one two three four five six seven eight nine ten"}, []string{"one", "two", "three", "four", "five", "six", "seven", "eight"}},
		{"control characters and paths", []string{"../etc/passwd\x00", "\ufeffdiet"}, []string{"etc", "passwd", "diet"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cleanKeywords(tt.in); !slices.Equal(got, tt.want) {
				t.Fatalf("cleanKeywords(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestMergeKeywords(t *testing.T) {
	tests := []struct {
		have, add, want []string
	}{
		{nil, []string{"food"}, []string{"food"}},
		{[]string{"Rare Steak"}, []string{"food", "rare steak"}, []string{"Rare Steak", "food"}}, // a person's form stays
		{[]string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}, []string{"food"}, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}},
		{[]string{"a", "b", "c", "d", "e", "f", "g"}, []string{"x", "y"}, []string{"a", "b", "c", "d", "e", "f", "g", "x"}},
	}
	for _, tt := range tests {
		if got := mergeKeywords(tt.have, tt.add); !slices.Equal(got, tt.want) {
			t.Errorf("mergeKeywords(%q, %q) = %q, want %q", tt.have, tt.add, got, tt.want)
		}
	}
}

// TestParseKeywords: the model's keywords come first, its search terms'
// words fill up; an answer without either has none; a mistyped list
// skips the fact.
func TestParseKeywords(t *testing.T) {
	facts, probs, err := ParseFacts(`{"facts":[{"kind":"user","description":"Loves a rare steak","fact":"You love a rare steak.","search":["red meat"],"keywords":["Food","eat","food"]}]}`)
	if err != nil || len(probs) != 0 || len(facts) != 1 {
		t.Fatalf("%v %v %v", facts, probs, err)
	}
	if want := []string{"food", "eat", "red", "meat"}; !slices.Equal(facts[0].Keywords, want) {
		t.Fatalf("keywords %q, want %q", facts[0].Keywords, want)
	}
	facts, _, _ = ParseFacts(`{"facts":[{"kind":"user","description":"d","fact":"f"}]}`)
	if len(facts) != 1 || facts[0].Keywords != nil {
		t.Fatalf("%+v", facts)
	}
	if facts, probs, _ := ParseFacts(`{"facts":[{"kind":"user","description":"d","fact":"f","keywords":"food"}]}`); len(facts) != 0 || len(probs) != 1 {
		t.Fatalf("a mistyped keywords list was accepted: %+v %q", facts, probs)
	}
	if !strings.Contains(string(extractSchema), `"keywords"`) || !strings.Contains(extractSystem, "- keywords:") {
		t.Fatal("the model is not asked for keywords")
	}
}

// TestKeywordsWritten: consolidation stores a fact's keywords as the
// memory's keywords: frontmatter on ADD (and on the new memory of a
// DELETE), adds them to an UPDATEd memory's own, and recall then finds
// the memory by a keyword that is in neither its title nor its text.
func TestKeywordsWritten(t *testing.T) {
	both(t, func(t *testing.T, provider string) {
		e := newEnv(t, provider, map[string]string{
			"user_memory/likes-tea.md":      "---\ndescription: Likes tea\nstatus: active\nkeywords: [Drinks]\n---\n# Likes Tea\n\n## Fact\nYou like tea.\n",
			"user_memory/lives-in-porto.md": "---\ndescription: Lives in Porto\nstatus: active\ntopic: home-city\n---\n# Lives In Porto\n\n## Fact\nYou live in Porto.\n",
		})
		e.addTranscript("transcripts/s.jsonl", jsonl("I love a rare steak. Green tea in the morning. We moved to Lisbon."))
		e.script([]Fact{
			{Kind: "user", Slug: "loves-rare-steak", Description: "Loves a rare steak", Fact: "You love a rare steak.", Keywords: []string{"food", "eat", "dinner"}},
			{Kind: "user", Slug: "likes-green-tea", Description: "Likes green tea", Fact: "You like green tea.", Keywords: []string{"drinks", "beverage"}},
			{Kind: "user", Slug: "moved-to-lisbon", Description: "Moved to Lisbon", Fact: "You moved to Lisbon.", Topic: "home-city", Search: []string{"relocation"}},
		}, []Decision{
			{Fact: 0, Action: ActionAdd},
			{Fact: 1, Action: ActionUpdate, Target: "user_memory/likes-tea", Text: "You like tea, green tea most."},
			{Fact: 2, Action: ActionDelete, Target: "user_memory/lives-in-porto"},
		})
		if rep := e.run(); rep.Added != 2 || rep.Updated != 1 || rep.Contradicted != 1 {
			t.Fatalf("report %+v", rep)
		}
		for rel, want := range map[string][]string{
			"user_memory/loves-rare-steak.md": {"food", "eat", "dinner"},
			"user_memory/likes-tea.md":        {"Drinks", "beverage"}, // a person's keyword kept as written
			"user_memory/moved-to-lisbon.md":  {"relocation"},         // from the search terms
			"user_memory/lives-in-porto.md":   nil,                    // retired, untouched
		} {
			if got := e.mem(rel).Front.Keywords; !slices.Equal(got, want) {
				t.Errorf("%s: keywords %q, want %q\n%s", rel, got, want, e.read(rel))
			}
		}
		if !strings.Contains(e.read("user_memory/loves-rare-steak.md"), "\nkeywords: [food, eat, dinner]\n") {
			t.Errorf("keywords line:\n%s", e.read("user_memory/loves-rare-steak.md"))
		}
		// "dinner" is in neither the title nor the text: only the keywords.
		var got []string
		for _, h := range e.g.RecallIndex().Search("dinner", recall.Options{}) {
			got = append(got, h.Path)
		}
		if !slices.Equal(got, []string{"user_memory/loves-rare-steak.md"}) {
			t.Fatalf("recall of dinner: %q", got)
		}
		e.checkGit()
	})
}

// FuzzParseFactsKeywords: whatever the model puts in keywords and search,
// the memory's keywords are at most MaxKeywords distinct lower-case words
// of letters only that are no stop words, and they survive being
// written to a memory file and read back.
func FuzzParseFactsKeywords(f *testing.F) {
	f.Add("Food", "lives in", "eat")
	f.Add("null", "true", "- [x]: y")
	f.Add("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "../../etc", "\ufeff")
	f.Add("Straße", "İstanbul", "ǅemal")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		answer := llmtest.JSON(map[string]any{"facts": []map[string]any{{"kind": "user", "description": "d", "fact": "f", "search": []string{c}, "keywords": []string{a, b, a}}}})
		facts, _, err := ParseFacts(answer)
		if err != nil || len(facts) != 1 {
			t.Fatalf("%v %v", facts, err)
		}
		kw := facts[0].Keywords
		if len(kw) > MaxKeywords {
			t.Fatalf("%d keywords", len(kw))
		}
		seen := map[string]bool{}
		for _, w := range kw {
			n := utf8.RuneCountInString(w)
			if n < 2 || n > MaxKeyword || seen[w] || recall.IsStopWord(w) || !slices.Equal(recall.Words(w), []string{w}) || strings.ContainsFunc(w, unicode.IsDigit) {
				t.Fatalf("bad keyword %q in %q", w, kw)
			}
			seen[w] = true
		}
		m := memgraph.NewMemory("user_memory/x.md", "X", "d", "f", "", time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC))
		m.SetKeywords(kw)
		back, probs := memgraph.Parse(m.Path, m.Render())
		if len(probs) != 0 {
			t.Fatalf("%v\n%s", probs, m.Render())
		}
		if !slices.Equal(back.Front.Keywords, kw) && !(len(kw) == 0 && len(back.Front.Keywords) == 0) {
			t.Fatalf("keywords %q read back as %q:\n%s", kw, back.Front.Keywords, m.Render())
		}
	})
}
