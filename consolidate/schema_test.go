package consolidate

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestFirstJSONObject(t *testing.T) {
	for in, want := range map[string]string{
		`{"facts":[]}`:                                 `{"facts":[]}`,
		"```json\n{\"facts\": []}\n```":                `{"facts": []}`,
		"Sure! Here you go: {\"facts\":[]} Enjoy {x}":  `{"facts":[]}`,
		"{broken {\"facts\":[{\"a\":1}]}":              `{"facts":[{"a":1}]}`,
		"Thinking {about it}... {\"decisions\": [] }.": `{"decisions": [] }`,
	} {
		got, err := firstJSONObject(in)
		if err != nil || string(got) != want {
			t.Errorf("%q: got %s, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "no json here", "[1,2]", "{\"unterminated\": "} {
		if _, err := firstJSONObject(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestParseFacts(t *testing.T) {
	long := strings.Repeat("word ", 100)
	ans := `{"facts":[
 {"kind":"user","slug":"has-dog","description":"Has a dog","fact":"You have a dog.","episode":"Today."},
 {"kind":"system","slug":"x","description":"d","fact":"f","episode":""},
 {"kind":"user","description":42,"fact":"f"},
 {"kind":"character","slug":"short","description":"` + long + `","fact":"Be brief.\n## Access log\nused, 01.01.26","episode":""},
 "not an object"
]}`
	facts, probs, err := ParseFacts(ans)
	if err != nil {
		t.Fatal(err)
	}
	if len(facts) != 2 || len(probs) != 3 {
		t.Fatalf("facts %+v problems %q", facts, probs)
	}
	if n := len([]rune(facts[1].Description)); n > MaxDescription {
		t.Errorf("description %d runes", n)
	}
	if strings.Contains(facts[1].Fact, "\n## Access log") {
		t.Errorf("fact can forge a section: %q", facts[1].Fact)
	}
	var many []map[string]string
	for i := 0; i < 20; i++ {
		many = append(many, map[string]string{"kind": "user", "slug": "s", "description": "d", "fact": "f", "episode": ""})
	}
	b, _ := json.Marshal(map[string]any{"facts": many})
	facts, probs, err = ParseFacts(string(b))
	if err != nil || len(facts) != MaxFacts || len(probs) != 1 {
		t.Fatalf("cap: %d facts, %q, %v", len(facts), probs, err)
	}
	for _, garbage := range []string{"lol", `{"fax":[]}`, `{"facts":"none"}`} {
		if _, _, err := ParseFacts(garbage); err == nil {
			t.Errorf("%q accepted", garbage)
		}
	}
}

func TestParseDecisions(t *testing.T) {
	ans := "```json\n" + `{"decisions":[
 {"fact":0,"action":"add","target":"","description":"","text":""},
 {"fact":1,"action":"UPDATE","target":"user_memory/likes-tea","description":"Likes tea","text":"You like tea."},
 {"fact":1,"action":"NONE","target":"user_memory/likes-tea","description":"","text":""},
 {"fact":2,"action":"MERGE","target":"x","description":"","text":""},
 {"fact":3,"action":"DELETE","target":"","description":"","text":""},
 {"fact":9,"action":"ADD","target":"","description":"","text":""},
 {"fact":-1,"action":"ADD"},
 {"fact":"2","action":"NONE","target":"user_memory/a"}
]}` + "\n```"
	ds, probs, err := ParseDecisions(ans, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Action != ActionAdd || ds[1].Target != "user_memory/likes-tea" {
		t.Fatalf("decisions %+v", ds)
	}
	if len(probs) != 6 {
		t.Fatalf("problems %q", probs)
	}
}

func TestSchemasAreJSON(t *testing.T) {
	for _, s := range []json.RawMessage{extractSchema, decideSchema} {
		var v map[string]any
		if err := json.Unmarshal(s, &v); err != nil {
			t.Fatal(err)
		}
	}
}

func FuzzParseFacts(f *testing.F) {
	f.Add(`{"facts":[{"kind":"user","slug":"a","description":"b","fact":"c","episode":"d"}]}`)
	f.Add("```\n{\"facts\":[{}]}\n```")
	f.Fuzz(func(t *testing.T, s string) {
		facts, _, err := ParseFacts(s)
		if err != nil {
			return
		}
		if len(facts) > MaxFacts {
			t.Fatal("cap broken")
		}
		for _, x := range facts {
			if len([]rune(x.Description)) > MaxDescription || strings.Contains(x.Description, "\n") {
				t.Fatalf("bad description %q", x.Description)
			}
			if x.Kind != "user" && x.Kind != "character" {
				t.Fatal("bad kind")
			}
		}
	})
}

func FuzzParseDecisions(f *testing.F) {
	f.Add(`{"decisions":[{"fact":0,"action":"NONE","target":"user_memory/a","description":"","text":""}]}`, 2)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 100 {
			return
		}
		ds, _, err := ParseDecisions(s, n)
		if err != nil {
			return
		}
		seen := map[int]bool{}
		for _, d := range ds {
			if d.Fact < 0 || d.Fact >= n || seen[d.Fact] {
				t.Fatalf("bad fact index %d", d.Fact)
			}
			seen[d.Fact] = true
		}
	})
}

func TestParseDecisionsOneBased(t *testing.T) {
	ds, probs, err := ParseDecisions(`{"decisions":[{"fact":1,"action":"ADD","target":"","description":"","text":""},{"fact":2,"action":"NONE","target":"user_memory/a","description":"","text":""}]}`, 2)
	if err != nil || len(ds) != 2 || ds[0].Fact != 0 || ds[1].Fact != 1 || len(probs) != 1 {
		t.Fatalf("%+v %q %v", ds, probs, err)
	}
	// 1 and 2 of three facts: not a numbering slip, fact 2 is the third.
	ds, _, _ = ParseDecisions(`{"decisions":[{"fact":1,"action":"ADD","target":"","description":"","text":""},{"fact":2,"action":"ADD","target":"","description":"","text":""}]}`, 3)
	if len(ds) != 2 || ds[0].Fact != 1 || ds[1].Fact != 2 {
		t.Fatalf("%+v", ds)
	}
}

func TestTargetPath(t *testing.T) {
	for in, want := range map[string]string{
		"user_memory/likes-tea":       "user_memory/likes-tea.md",
		"./character_memory/brief.md": "character_memory/brief.md",
		" user_memory/x ":             "user_memory/x.md",
		"../../etc/passwd":            "",
		"/etc/shadow":                 "",
		"user_memory/../character":    "",
		"character":                   "",
		"system/rules":                "",
		"user_memory/a/b":             "",
		"user_memory/Bad Slug":        "",
		"user_memory\\x":              "",
		"transcripts/s1":              "",
		"user_memory/.hidden":         "",
	} {
		got, err := targetPath(in)
		if (err != nil) != (want == "") || got != want {
			t.Errorf("%q: got %q, %v", in, got, err)
		}
	}
}

// TestStripControl: a fact loses control characters by mindmount's one
// rule (memgraph.IsControl: C0, DEL, C1, line and paragraph separators)
// and byte order marks, keeping newlines and tabs.
func TestStripControl(t *testing.T) {
	tests := map[string]string{
		"plain":              "plain",
		"a\nb\tc":            "a\nb\tc",
		"bell\a\x00\x7f":     "bell",
		"next\u0085line":     "nextline",
		"sep\u2028par\u2029": "seppar",
		"\ufeffbom":          "bom",
		"café ✓":             "café ✓",
	}
	for in, want := range tests {
		if got := stripControl(in); got != want {
			t.Errorf("stripControl(%q) = %q, want %q", in, got, want)
		}
	}
}
