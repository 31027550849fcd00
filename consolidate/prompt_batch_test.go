package consolidate

import (
	"slices"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// batchEnv is an env whose transcript transcripts/pr-7.md is the batch
// PR#7; user_memory/cache-uses-sqlite.md came from PR#1 and
// user_memory/cache-port.md from PR#7 itself, on an earlier run.
func batchEnv(t *testing.T) *env {
	old := "---\ndescription: \"Decision: use SQLite for the cache\"\nstatus: active\nsource: PR#1 https://example.com/pull/1\ntopic: cache-backend\n---\n# Cache Uses Sqlite\n\n## Fact\nThe cache is stored in SQLite.\n\n## Access log\n"
	sib := "---\ndescription: \"Convention: the cache listens on port 6379\"\nstatus: active\nsource: PR#7 https://example.com/pull/7\ntopic: cache-backend\n---\n# Cache Port\n\n## Fact\nThe cache listens on port 6379.\n\n## Access log\n"
	e := newEnv(t, "ollama", map[string]string{"user_memory/cache-uses-sqlite.md": old, "user_memory/cache-port.md": sib})
	e.cfg.Provenance = func(rel string) (Provenance, bool) {
		if rel == "transcripts/pr-7.md" {
			return Provenance{Source: "PR#7", URL: "https://example.com/pull/7"}, true
		}
		return Provenance{}, false
	}
	e.restart()
	return e
}

// TestBatchPrompt: a pull request's batch is extracted with the project
// prompt (the four kinds, the sibling rule) and its schema; the kinds land
// in the memories' tags; a sibling candidate is marked; a conversation
// still gets the conversation's prompt.
func TestBatchPrompt(t *testing.T) {
	e := batchEnv(t)
	fact := func(kind, slug, desc string) map[string]any {
		return map[string]any{"kind": kind, "slug": slug, "description": desc, "fact": desc + ".", "episode": "", "topic": "cache-backend",
			"search": []string{"cache"}, "keywords": []string{}, "pinned": false}
	}
	e.srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []any{
		fact("decision", "cache-uses-redis", "Decision: move the cache to Redis"),
		fact("Convention", "redis-keys-prefixed", "Convention: prefix every Redis key with the service"),
		fact("dead end", "memcached-tried", "Dead end: memcached lost keys on eviction"),
		fact("user", "not-a-project-kind", "You like Redis"),
	}})})
	e.srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: llmtest.JSON(map[string]any{"decisions": []Decision{
		{Fact: 0, Action: ActionDelete, Target: "user_memory/cache-uses-sqlite"},
		{Fact: 1, Action: ActionAdd}, {Fact: 2, Action: ActionAdd},
	}})})
	e.addTranscript("transcripts/pr-7.md", "# PR#7: Move the cache to Redis\n\nSQLite cannot be shared: move the cache to Redis.\n")
	rep := e.run()

	ex := e.srv.CallsOf(llmtest.KindExtract)
	if len(ex) != 1 {
		t.Fatalf("%d extraction calls", len(ex))
	}
	for _, want := range []string{`"decision"`, `"gotcha"`, `"convention"`, `"dead-end"`, "ONE batch from ONE source", "never contradict or supersede each other"} {
		if !strings.Contains(ex[0].System, want) {
			t.Errorf("the batch's extraction prompt lacks %q", want)
		}
	}
	if !strings.Contains(string(ex[0].Schema), `"dead-end"`) || strings.Contains(string(ex[0].Schema), `"character"`) {
		t.Errorf("the batch's schema does not name its kinds: %s", ex[0].Schema)
	}
	dc := e.srv.CallsOf(llmtest.KindDecide)
	if len(dc) != 1 || !strings.Contains(dc[0].System, "Never UPDATE or DELETE a sibling") {
		t.Fatalf("the batch's decision prompt lacks the sibling rule")
	}
	if !strings.Contains(dc[0].Prompt, "- path: user_memory/cache-port\n  offered because: same topic cache-backend, search match\n  same source: a sibling of these facts\n") {
		t.Errorf("the sibling candidate is not marked:\n%s", dc[0].Prompt)
	}
	if strings.Contains(dc[0].Prompt, "path: user_memory/cache-uses-sqlite\n  offered because: same topic cache-backend, search match\n  same source") {
		t.Errorf("an older source's memory is marked as a sibling")
	}
	if len(rep.Problems) == 0 || !strings.Contains(strings.Join(rep.Problems, "\n"), `kind "user" is not decision, gotcha, convention, dead-end`) {
		t.Errorf("a conversation's kind in a batch was not refused: %v", rep.Problems)
	}
	for rel, tag := range map[string]string{"user_memory/cache-uses-redis.md": KindDecision, "user_memory/redis-keys-prefixed.md": KindConvention, "user_memory/memcached-tried.md": KindDeadEnd} {
		if m := e.mem(rel); !slices.Equal(m.Front.Tags, []string{tag}) || !strings.HasPrefix(m.Front.Source, "PR#7 ") {
			t.Errorf("%s: tags %v source %q, want [%s] from PR#7", rel, m.Front.Tags, m.Front.Source, tag)
		}
	}
	if m := e.mem("user_memory/cache-uses-sqlite.md"); m.Active() {
		t.Errorf("the older source's decision was not superseded")
	}

	// A conversation: the conversation's prompt and kinds.
	e.script([]Fact{{Kind: "user", Slug: "likes-tea", Description: "Likes tea", Fact: "You like tea."}}, []Decision{{Fact: 0, Action: ActionAdd}})
	e.addTranscript("transcripts/chat.jsonl", jsonl("I like tea."))
	e.run()
	ex = e.srv.CallsOf(llmtest.KindExtract)
	if last := ex[len(ex)-1]; strings.Contains(last.System, "dead-end") || !strings.Contains(string(last.Schema), `"character"`) {
		t.Errorf("a conversation got the batch's prompt or schema")
	}
	if dc = e.srv.CallsOf(llmtest.KindDecide); strings.Contains(dc[len(dc)-1].System, "sibling") {
		t.Errorf("a conversation got the batch's decision rules")
	}
	if m := e.mem("user_memory/likes-tea.md"); len(m.Front.Tags) != 0 {
		t.Errorf("a conversation's memory got tags %v", m.Front.Tags)
	}
}

// TestParseBatchFacts: the kinds a batch accepts, and that a
// conversation refuses them.
func TestParseBatchFacts(t *testing.T) {
	for _, tc := range []struct {
		kind  string
		batch string // the tag, "" when refused
		conv  bool   // a conversation accepts it
	}{
		{"decision", "decision", false}, {"Gotcha", "gotcha", false}, {" convention ", "convention", false},
		{"dead end", "dead-end", false}, {"Dead_End", "dead-end", false}, {"dead-end", "dead-end", false},
		{"user", "", true}, {"character", "", true}, {"deadend", "", false}, {"", "", false}, {"decision; rm -rf", "", false},
	} {
		ans := llmtest.JSON(map[string]any{"facts": []any{map[string]any{"kind": tc.kind, "description": "d", "fact": "f"}}})
		fs, _, err := ParseBatchFacts(ans)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.batch == "" && len(fs) != 0:
			t.Errorf("batch: kind %q accepted: %+v", tc.kind, fs)
		case tc.batch != "" && (len(fs) != 1 || fs[0].Kind != "user" || !slices.Equal(fs[0].Tags, []string{tc.batch})):
			t.Errorf("batch: kind %q gave %+v, want user tagged %s", tc.kind, fs, tc.batch)
		}
		fs, _, _ = ParseFacts(ans)
		if (len(fs) == 1) != tc.conv || (len(fs) == 1 && len(fs[0].Tags) != 0) {
			t.Errorf("conversation: kind %q gave %+v", tc.kind, fs)
		}
	}
}

// FuzzParseBatchFacts: any answer parses or errs without panicking, and
// every fact it keeps is a tagged user fact.
func FuzzParseBatchFacts(f *testing.F) {
	f.Add(`{"facts":[{"kind":"decision","description":"d","fact":"f"}]}`)
	f.Add(`{"facts":[{"kind":"dead end","description":"","fact":"f","tags":["x"]}]}`)
	f.Add(`garbage`)
	f.Fuzz(func(t *testing.T, s string) {
		fs, _, err := ParseBatchFacts(s)
		if err != nil {
			return
		}
		for _, fc := range fs {
			if fc.Kind != "user" || len(fc.Tags) != 1 || !slices.Contains(ProjectKinds, fc.Tags[0]) {
				t.Fatalf("kept %+v", fc)
			}
		}
	})
}
