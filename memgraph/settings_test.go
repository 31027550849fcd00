package memgraph

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseSettings(t *testing.T) {
	tests := []struct {
		in     string
		tokens int
		probs  []string // substrings, one per problem
	}{
		{"", 0, nil},
		{"# nothing set\n\n", 0, nil},
		{"index_tokens: 3000\n", 3000, nil},
		{"index_tokens: 3000 # about 12 KB\n", 3000, nil},
		{"index_tokens: 50\n", 0, []string{"from 100 to 1000000"}},
		{"index_tokens: lots\n", 0, []string{`index_tokens must be a whole number`}},
		{"index_tokens: 2000\nindex_tokens: 3000\n", 2000, []string{"set twice"}},
		{"index_token: 3000\n", 0, []string{`unknown key "index_token" (known keys: index_tokens, transcript_retention, hook_read_mib, skill_list_chars)`}},
		{"just words\n", 0, []string{`want "key: value"`}},
	}
	for _, tt := range tests {
		s, probs := ParseSettings([]byte(tt.in))
		if s.IndexTokens != tt.tokens {
			t.Errorf("%q: IndexTokens = %d, want %d", tt.in, s.IndexTokens, tt.tokens)
		}
		if len(probs) != len(tt.probs) {
			t.Errorf("%q: problems %v, want %d", tt.in, probs, len(tt.probs))
			continue
		}
		for i, p := range probs {
			if !strings.Contains(p.Msg, tt.probs[i]) || p.Path != SettingsFile || p.Line == 0 {
				t.Errorf("%q: problem %v, want one about %q with a line", tt.in, p, tt.probs[i])
			}
		}
	}
	// Validate knows the settings file, so every checker reports it.
	if probs := Validate(SettingsFile, []byte("index_tokens: 1\n"), nil); len(probs) != 1 {
		t.Errorf("Validate(settings) = %v", probs)
	}
}

func FuzzParseSettings(f *testing.F) {
	f.Add([]byte("index_tokens: 3000\n"))
	f.Add([]byte("index_tokens: -1\n# x\nfoo: bar\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, probs := ParseSettings(data)
		if s.IndexTokens != 0 && (s.IndexTokens < MinIndexTokens || s.IndexTokens > MaxIndexTokens) {
			t.Fatalf("accepted index_tokens %d", s.IndexTokens)
		}
		for _, p := range probs {
			if strings.ContainsAny(p.Msg, "\n\r") {
				t.Fatalf("problem message spans lines: %q", p.Msg)
			}
		}
	})
}

// manyMemories is a repository with n user memories, memory i used i%7
// times.
func manyMemories(t *testing.T, n int) string {
	files := map[string]string{"user.md": "# User\n\nAda.\n"}
	for i := 0; i < n; i++ {
		var uses []string
		for u := 0; u < i%7; u++ {
			uses = append(uses, fmt.Sprintf("%02d.01.26", u+1))
		}
		files[fmt.Sprintf("user_memory/m-%04d.md", i)] = mem("", fmt.Sprintf("Memory number %d about something", i), "", "Fact.", uses...)
	}
	return writeRepo(t, files)
}

func TestIndexBudget(t *testing.T) {
	dir := manyMemories(t, 400)
	g, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	full := string(g.FullIndex(KindUser))
	if strings.Count(full, "\n- user_memory/") != 400 || strings.Contains(full, "not shown") {
		t.Fatalf("full index lists %d memories", strings.Count(full, "\n- user_memory/"))
	}
	idx := string(g.Index(KindUser))
	if len(idx) > DefaultIndexTokens*BytesPerToken {
		t.Errorf("index is %d bytes, budget %d", len(idx), DefaultIndexTokens*BytesPerToken)
	}
	shown := strings.Count(idx, "\n- user_memory/")
	if shown == 0 || shown >= 400 {
		t.Fatalf("index shows %d of 400", shown)
	}
	// The top of the ranking, in order: the index is a prefix of the full
	// listing up to its footer.
	body := idx[:strings.Index(idx, "\n<!-- mindmount: index cut")]
	if !strings.HasPrefix(full, body) {
		t.Errorf("budgeted index is not the top of the full ranking")
	}
	footer := fmt.Sprintf("… %d more user memories not shown. All of them: .mindmount/index/user_memory.md; the files: ls user_memory/; search: cat .mindmount/search/<words>\n", 400-shown)
	if !strings.HasSuffix(idx, footer) {
		t.Errorf("index ends with:\n%s\nwant footer:\n%s", idx[len(idx)-300:], footer)
	}

	// The settings file sets the budget; a bad one is reported and the
	// default applies.
	writeFile(t, dir, SettingsFile, "index_tokens: 500\n")
	if small := g.Index(KindUser); len(small) > 500*BytesPerToken || len(small) >= len(idx) {
		t.Errorf("index_tokens: 500 gives %d bytes", len(small))
	}
	writeFile(t, dir, SettingsFile, "index_tokens: 5\n")
	if got := g.Index(KindUser); string(got) != idx {
		t.Errorf("an invalid settings file changed the budget")
	}
	if probs := g.Problems(); len(probs) != 1 || probs[0].Path != SettingsFile {
		t.Errorf("Problems() = %v, want the settings file's", probs)
	}
	// A flag overrides the file.
	g.SetIndexTokens(MaxIndexTokens)
	if got := string(g.Index(KindUser)); got != full {
		t.Errorf("a budget larger than the index does not list everything")
	}
	// Small repositories are not cut at all.
	g2, _ := Scan(testRepo(t))
	if got, want := string(g2.Index(KindUser)), string(g2.FullIndex(KindUser)); got != want || strings.Contains(got, "not shown") {
		t.Errorf("a small index was cut:\n%s", got)
	}
}

// A footer never overflows the budget, even a tiny one.
func TestIndexBudgetTiny(t *testing.T) {
	g, _ := Scan(manyMemories(t, 50))
	for _, max := range []int{1, 300, 400, 600, 1000} {
		b := g.IndexWithin(KindUser, max)
		if !strings.Contains(string(b), "more user memories not shown") {
			t.Errorf("budget %d: no footer", max)
		}
		if head := len(indexHeader(KindUser, 50)); max > head+400 && len(b) > max {
			t.Errorf("budget %d: %d bytes", max, len(b))
		}
	}
}
