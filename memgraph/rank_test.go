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

// TestRankPinned: a pinned memory ranks before every unpinned one, however
// rarely used; among pinned ones the use count decides. Both frontmatter
// parsers read the key; anything but true or false is an error.
func TestRankPinned(t *testing.T) {
	pin := func(d string) string {
		return strings.Replace(d, "---\ndescription:", "---\npinned: true\ndescription:", 1)
	}
	files := []struct{ path, data string }{
		{"user_memory/coffee.md", mem("", "coffee", "", "f", "01.01.26", "02.01.26", "03.01.26")},
		{"user_memory/allergy.md", pin(mem("", "allergy", "", "f"))},
		{"user_memory/medication.md", pin(mem("", "medication", "", "f", "01.01.26"))},
		{"user_memory/tea.md", mem("", "tea", "", "f", "01.01.26")},
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
		got = append(got, m.Slug())
	}
	if strings.Join(got, " ") != "medication allergy coffee tea" {
		t.Fatalf("rank %v", got)
	}
	for _, slow := range []bool{false, true} {
		noFastPath = slow
		m, probs := Parse("user_memory/x.md", []byte(pin(mem("", "x", "", "f"))))
		if len(probs) > 0 || !m.Front.Pinned {
			t.Fatalf("slow path %v: pinned %v %v", slow, m.Front.Pinned, probs)
		}
		if _, probs := Parse("user_memory/x.md", []byte(strings.Replace(pin(mem("", "x", "", "f")), "pinned: true", "pinned: critical", 1))); len(probs) == 0 {
			t.Fatalf("slow path %v: pinned: critical accepted", slow)
		}
	}
	noFastPath = false
}
