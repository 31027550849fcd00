package memgraph

import (
	"fmt"
	"strings"
	"testing"
)

// mem builds a memory file for tests; uses are access log dates.
func mem(path, desc, status, fact string, uses ...string) string {
	var b strings.Builder
	b.WriteString("---\ndescription: " + desc + "\n")
	if status != "" {
		b.WriteString("status: " + status + "\n")
	}
	b.WriteString("---\n# " + desc + "\n\n## Fact\n" + fact + "\n\n## Access log\n")
	for _, u := range uses {
		fmt.Fprintf(&b, "used, %s\n", u)
	}
	return b.String()
}

func TestRank(t *testing.T) {
	files := []struct{ path, data string }{
		{"user_memory/b.md", mem("", "b", "", "f", "01.01.26", "02.01.26")},
		{"user_memory/a.md", mem("", "a", "", "f", "01.01.26", "02.01.26")},           // tie with b: slug decides
		{"user_memory/recent.md", mem("", "recent", "", "f", "01.01.26", "05.01.26")}, // same count, more recent
		{"user_memory/used-words.md", mem("", "used words", "", "used, used, used, 01.01.26\nused, 02.01.26", "01.01.26")},
		{"user_memory/contradicted.md", mem("", "old", "contradicted", "f", "01.01.26", "02.01.26", "03.01.26", "04.01.26", "05.01.26")},
		{"user_memory/retracted.md", mem("", "gone", "retracted", "f", "01.01.26", "02.01.26", "03.01.26")},
		{"user_memory/none.md", mem("", "none", "", "f")},
		{"user_memory/top.md", mem("", "top", "active", "f", "01.01.26", "02.01.26", "03.01.26")},
	}
	var ms []*Memory
	for _, f := range files {
		m, probs := Parse(f.path, []byte(f.data))
		if len(probs) > 0 {
			t.Fatal(probs)
		}
		ms = append(ms, m)
	}
	var got []string
	for _, m := range Rank(ms) {
		got = append(got, fmt.Sprintf("%s:%d", m.Slug(), m.Uses))
	}
	want := "top:3 recent:2 a:2 b:2 used-words:1 none:0"
	if strings.Join(got, " ") != want {
		t.Errorf("rank = %v, want %s", got, want)
	}
	idx := string(RenderIndex(KindUser, ms))
	if strings.Contains(idx, "contradicted") || strings.Contains(idx, "retracted") {
		t.Errorf("retired memory in index:\n%s", idx)
	}
	if !strings.Contains(idx, "- user_memory/used-words.md — used words (uses: 1)\n") {
		t.Errorf("index line missing:\n%s", idx)
	}
}
