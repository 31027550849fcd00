package consolidate

import (
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/memgraph"
)

// TestTopicWritten: consolidation writes the fact's topic on ADD, on the
// new memory of a DELETE, and on UPDATE when the memory had none; a topic
// a person set is kept.
func TestTopicWritten(t *testing.T) {
	both(t, func(t *testing.T, provider string) {
		e := newEnv(t, provider, map[string]string{
			"user_memory/likes-tea.md":      memoryFile("Likes tea", "Likes Tea", "You like tea."),
			"user_memory/drinks-coffee.md":  "---\ndescription: Drinks coffee\nstatus: active\ntopic: morning-drink\n---\n# Drinks Coffee\n\n## Fact\nYou drink coffee.\n",
			"user_memory/lives-in-porto.md": "---\ndescription: Lives in Porto\nstatus: active\ntopic: home-city\n---\n# Lives In Porto\n\n## Fact\nYou live in Porto.\n",
		})
		e.addTranscript("transcripts/s.jsonl", jsonl("Green tea in the morning; I moved to Lisbon; I keep bees."))
		e.script([]Fact{
			{Kind: "user", Slug: "likes-green-tea", Description: "Likes green tea", Fact: "You like green tea.", Topic: "Tea Preference"},
			{Kind: "user", Slug: "coffee-black", Description: "Drinks coffee black", Fact: "You drink your coffee black.", Topic: "coffee"},
			{Kind: "user", Slug: "moved-to-lisbon", Description: "Moved to Lisbon", Fact: "You moved to Lisbon.", Topic: "home-city"},
			{Kind: "user", Slug: "keeps-bees", Description: "Keeps bees", Fact: "You keep bees.", Topic: "../hobby/x"},
		}, []Decision{
			{Fact: 0, Action: ActionUpdate, Target: "user_memory/likes-tea", Text: "You like tea, green tea most."},
			{Fact: 1, Action: ActionUpdate, Target: "user_memory/drinks-coffee", Text: "You drink coffee, black."},
			{Fact: 2, Action: ActionDelete, Target: "user_memory/lives-in-porto"},
			{Fact: 3, Action: ActionAdd},
		})
		rep := e.run()
		// The contradiction adds moved-to-lisbon.md beside keeps-bees.md.
		if rep.Updated != 2 || rep.Contradicted != 1 || rep.Added != 2 {
			t.Fatalf("report %+v", rep)
		}
		for rel, topic := range map[string]string{
			"user_memory/likes-tea.md":       "tea-preference", // filled in, normalised
			"user_memory/drinks-coffee.md":   "morning-drink",  // kept
			"user_memory/moved-to-lisbon.md": "home-city",
			"user_memory/keeps-bees.md":      "", // a path is no topic: dropped
		} {
			if got := e.mem(rel).Front.Topic; got != topic {
				t.Errorf("%s: topic %q, want %q", rel, got, topic)
			}
		}
		// Lisbon shares no word with Porto: it was offered through its topic.
		dec := e.srv.CallsOf(llmtest.KindDecide)
		if len(dec) != 1 || !strings.Contains(dec[0].Prompt, "- path: user_memory/lives-in-porto\n  offered because: same topic home-city") {
			t.Fatalf("decision prompt:\n%s", dec[0].Prompt)
		}
		if !strings.Contains(dec[0].System, "REPLACES the old memory") {
			t.Fatal("the single-valued topic rule is not in the decision prompt")
		}
		e.checkGit()
	})
}

// TestNoTopicsAsToday: an extraction answer without topic or search keys
// (an old prompt, a model that ignores them) is consolidated exactly as
// before: recall candidates only, no topic lines, no topic keys written.
func TestNoTopicsAsToday(t *testing.T) {
	e := newEnv(t, "ollama", map[string]string{
		"user_memory/lives-in-porto.md": "---\ndescription: Lives in Porto\nstatus: active\ntopic: home-city\n---\n# Lives In Porto\n\n## Fact\nYou live in Porto.\n",
		"user_memory/likes-tea.md":      memoryFile("Likes tea", "Likes Tea", "You like tea."),
	})
	e.addTranscript("transcripts/s.jsonl", jsonl("I moved to Lisbon. I like green tea."))
	// Raw JSON without the keys, as an old model would answer.
	e.srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: `{"facts":[{"kind":"user","slug":"moved-to-lisbon","description":"Moved to Lisbon","fact":"You moved to Lisbon.","episode":""},` +
		`{"kind":"user","slug":"likes-green-tea","description":"Likes green tea","fact":"You like green tea.","episode":""}]}`})
	e.srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""},{"fact":1,"action":"UPDATE","target":"user_memory/likes-tea","description":"","text":"You like tea, green tea most."}]}`})
	rep := e.run()
	if rep.Added != 1 || rep.Updated != 1 || len(rep.Problems) != 0 {
		t.Fatalf("report %+v", rep)
	}
	p := e.srv.CallsOf(llmtest.KindDecide)[0].Prompt
	if strings.Contains(p, "lives-in-porto") || strings.Contains(p, "same topic") || strings.Contains(p, "\ntopic: ") {
		t.Fatalf("decision prompt:\n%s", p)
	}
	if !strings.Contains(p, "offered because: search match") {
		t.Fatalf("recall candidate not offered:\n%s", p)
	}
	for _, rel := range []string{"user_memory/moved-to-lisbon.md", "user_memory/likes-tea.md"} {
		if strings.Contains(e.read(rel), "topic:") {
			t.Errorf("%s got a topic:\n%s", rel, e.read(rel))
		}
	}
	if !e.mem("user_memory/lives-in-porto.md").Active() {
		t.Fatal("the old memory was retired without a decision")
	}
}

func TestParseTopicAndSearch(t *testing.T) {
	facts, probs, err := ParseFacts(`{"facts":[{"kind":"user","description":"d","fact":"f","topic":" Home_City ","search":["lives in","a/b","","` + strings.Repeat("x", 50) + `","1","2","3","4","5"]}]}`)
	if err != nil || len(probs) != 0 || len(facts) != 1 {
		t.Fatalf("%v %v %v", facts, probs, err)
	}
	f := facts[0]
	if f.Topic != "home-city" || len(f.Search) != MaxSearchTerms || f.Search[0] != "lives in" || f.Search[1] != "1" {
		t.Fatalf("%+v", f)
	}
	if facts, _, _ := ParseFacts(`{"facts":[{"kind":"user","description":"d","fact":"f","search":"not a list"}]}`); len(facts) != 0 {
		t.Fatal("a mistyped search list was accepted")
	}
}

// TestStatusCountsTopicConflicts: the status line counts topics holding
// two active memories after a retirement.
func TestStatusCountsTopicConflicts(t *testing.T) {
	e := newEnv(t, "ollama", map[string]string{
		"user_memory/lives-in-porto.md":  "---\ndescription: Lives in Porto\nstatus: contradicted\ntopic: home-city\n---\n# P\n",
		"user_memory/lives-in-lisbon.md": "---\ndescription: Lives in Lisbon\nstatus: active\ntopic: home-city\n---\n# L\n",
		"user_memory/lives-in-braga.md":  "---\ndescription: Lives in Braga\nstatus: active\ntopic: home-city\n---\n# B\n",
	})
	if st := e.c.Status(); !strings.Contains(st, "1 topic holds two active memories after a retirement") {
		t.Fatalf("status %q", st)
	}
	e.g.Remove("user_memory/lives-in-braga.md")
	if st := e.c.Status(); strings.Contains(st, "topic holds") {
		t.Fatalf("status after the fix %q", st)
	}
}

// FuzzParseFactsTopic: whatever the model says, a topic is "" or valid
// (never a path) and the search terms are bounded one-line non-paths.
func FuzzParseFactsTopic(f *testing.F) {
	f.Add("home-city", "lives in")
	f.Add("../../etc", "a/b")
	f.Add("Home City", "x\ny")
	f.Fuzz(func(t *testing.T, topic, term string) {
		answer := llmtest.JSON(map[string]any{"facts": []map[string]any{{"kind": "user", "description": "d", "fact": "f", "topic": topic, "search": []string{term, term}}}})
		facts, _, err := ParseFacts(answer)
		if err != nil || len(facts) != 1 {
			t.Fatalf("%v %v", facts, err)
		}
		if x := facts[0].Topic; x != "" && !memgraph.ValidTopic(x) {
			t.Fatalf("invalid topic %q kept", x)
		}
		if len(facts[0].Search) > MaxSearchTerms {
			t.Fatal("too many search terms")
		}
		for _, s := range facts[0].Search {
			if s == "" || len([]rune(s)) > MaxSearchTerm || strings.ContainsAny(s, "/\\\n") {
				t.Fatalf("bad search term %q", s)
			}
		}
	})
}
