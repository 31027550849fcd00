package memgraph

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mindmount/mindmount/memgraph/recall"
)

// scopeRepo builds a graph whose n user memories and one external note
// carry word in their description.
func scopeRepo(t testing.TB, word string, n int, extra map[string]string) *Graph {
	t.Helper()
	files := map[string]string{"notes/" + word + "-note.md": mem("", word+" note", "", "a note")}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("user_memory/%s-%03d.md", word, i)] = mem("", fmt.Sprintf("%s fact %d", word, i), "", word+" is a fact", "01.01.26")
	}
	for k, v := range extra {
		files[k] = v
	}
	g, err := Scan(writeRepo(t, files))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

func TestScopeOf(t *testing.T) {
	for _, c := range []struct{ in, scope, rel string }{
		{"user_memory/a.md", ScopePersonal, "user_memory/a.md"},
		{"shared/eng/user_memory/a.md", "eng", "user_memory/a.md"},
		{"shared/eng", ScopePersonal, "shared/eng"},
		{"shared//a.md", ScopePersonal, "shared//a.md"},
		{"sharedx/eng/a.md", ScopePersonal, "sharedx/eng/a.md"},
	} {
		s, r := ScopeOf(c.in)
		if s != c.scope || r != c.rel {
			t.Errorf("ScopeOf(%q) = %q, %q; want %q, %q", c.in, s, r, c.scope, c.rel)
		}
	}
}

func TestValidScopeName(t *testing.T) {
	for name, ok := range map[string]bool{"eng": true, "a-1_b": true, "9x": true, "": false, "all": false, "personal": false,
		"-x": false, "Eng": false, "a/b": false, "..": false, ".x": false, strings.Repeat("a", 65): false} {
		if ValidScopeName(name) != ok {
			t.Errorf("ValidScopeName(%q) = %v", name, !ok)
		}
	}
}

func TestAttachScopesRefuses(t *testing.T) {
	g := scopeRepo(t, "me", 1, nil)
	team := scopeRepo(t, "eng", 1, nil)
	for _, sc := range [][]Scope{
		{{Name: "../x", Graph: team}},
		{{Name: "eng", Graph: team}, {Name: "eng", Graph: team}},
		{{Name: "eng", Graph: nil}},
		{{Name: "eng", Graph: g}},
	} {
		if err := g.AttachScopes(sc); !errors.Is(err, ErrBadScopeName) {
			t.Errorf("AttachScopes(%v) = %v", sc, err)
		}
	}
	if len(g.Scopes()) != 0 {
		t.Error("a refused set was attached")
	}
}

func TestShareBudget(t *testing.T) {
	for _, c := range []struct {
		avail int
		needs []int
		want  []int
	}{
		{100, []int{10, 10}, []int{10, 10}},
		{100, []int{10, 200}, []int{10, 90}},
		{90, []int{200, 200, 200}, []int{30, 30, 30}},
		{100, []int{20, 200, 200}, []int{20, 40, 40}},
		{-5, []int{1}, []int{0}},
		{100, nil, []int{}},
	} {
		got := shareBudget(c.avail, c.needs)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("shareBudget(%d, %v) = %v, want %v", c.avail, c.needs, got, c.want)
		}
	}
}

// TestNoScopeIsUnchanged: with no team attached (or after detaching) the
// index and the context are byte for byte what they were.
func TestNoScopeIsUnchanged(t *testing.T) {
	g := scopeRepo(t, "me", 50, nil)
	idx, ctx := string(g.Index(KindUser)), string(g.Context(ContextOptions{MaxBytes: 3000}))
	team := scopeRepo(t, "eng", 5, nil)
	if err := g.AttachScopes([]Scope{{"eng", team}}); err != nil {
		t.Fatal(err)
	}
	if string(g.Index(KindUser)) == idx {
		t.Error("attaching a team changed nothing in the index")
	}
	if err := g.AttachScopes(nil); err != nil {
		t.Fatal(err)
	}
	if string(g.Index(KindUser)) != idx || string(g.Context(ContextOptions{MaxBytes: 3000})) != ctx {
		t.Error("after detaching, the index or context differs from before")
	}
}

// TestScopedRendering: each team has its own section, every one of its
// lines names its scope, its system/ blocks and pinned memories are in
// the context, and nothing of a team is shown under a personal path.
func TestScopedRendering(t *testing.T) {
	pinned := strings.Replace(mem("", "deploy freeze", "", "Never deploy on Fridays."), "---\ndescription:", "---\npinned: true\ndescription:", 1)
	g := scopeRepo(t, "me", 3, nil)
	eng := scopeRepo(t, "eng", 3, map[string]string{
		"system/oncall.md":             "# On call\n\nThe eng pager rotates weekly.\n",
		"user_memory/deploy-freeze.md": pinned,
	})
	ops := scopeRepo(t, "ops", 2, nil)
	if err := g.AttachScopes([]Scope{{"eng", eng}, {"ops", ops}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		text     string
		contains []string
	}{
		{"index", string(g.Index(KindUser)), []string{
			"## Team memory: eng", "## Team memory: ops",
			"- shared/eng/user_memory/eng-000.md — eng fact 0 (uses: 1)\n",
			"- shared/ops/user_memory/ops-001.md — ops fact 1",
			"- user_memory/me-000.md — me fact 0",
		}},
		{"full index", string(g.FullIndex(KindUser)), []string{"- shared/eng/user_memory/eng-002.md"}},
		{"context", string(g.Context(ContextOptions{})), []string{
			"<!-- shared/eng/system/oncall.md -->", "The eng pager rotates weekly.",
			"- shared/eng/user_memory/deploy-freeze.md — Never deploy on Fridays.\n",
			"- shared/eng/notes/eng-note.md — eng note\n",
			"- shared/ops/user_memory/ops-000.md",
			"- user_memory/me-002.md",
		}},
	} {
		for _, s := range c.contains {
			if !strings.Contains(c.text, s) {
				t.Errorf("%s lacks %q:\n%s", c.name, s, c.text)
			}
		}
		for _, line := range strings.Split(c.text, "\n") {
			if strings.Contains(line, "eng") && strings.HasPrefix(strings.TrimSpace(line), "- ") && !strings.Contains(line, "shared/eng/") {
				t.Errorf("%s: a team line without its scope: %q", c.name, line)
			}
		}
		if strings.Index(c.text, "## Team memory: eng") < strings.Index(c.text, "me fact") {
			t.Errorf("%s: the team section comes before the personal memories", c.name)
		}
	}
	if idx := string(g.Index(KindCharacter)); strings.Contains(idx, "Team memory") {
		t.Errorf("a team without character memories has a section in the character index:\n%s", idx)
	}
}

// TestScopedWithinBudget: personal and team memories together stay within
// the budget, whatever it is; every part gets some of it; a cut team
// section says how many it leaves out and where they are.
func TestScopedWithinBudget(t *testing.T) {
	g := scopeRepo(t, "me", 300, nil)
	eng := scopeRepo(t, "eng", 300, map[string]string{"system/big.md": "# Big\n\n" + strings.Repeat("A long team rule.\n", 2000)})
	ops := scopeRepo(t, "ops", 300, nil)
	if err := g.AttachScopes([]Scope{{"eng", eng}, {"ops", ops}}); err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{2000, 4000, 8000, 32 << 10} {
		for name, text := range map[string]string{
			"index":   string(g.IndexWithin(KindUser, max)),
			"context": string(g.Context(ContextOptions{MaxBytes: max})),
		} {
			if len(text) > max {
				t.Errorf("%s at %d bytes: %d bytes", name, max, len(text))
			}
			for _, want := range []string{"- user_memory/me-", "- shared/eng/user_memory/eng-", "- shared/ops/user_memory/ops-", "more of team ops not shown"} {
				if !strings.Contains(text, want) {
					t.Errorf("%s at %d bytes lacks %q", name, max, want)
				}
			}
		}
	}
}

// TestScopesConcurrent (run with -race): teams attached and detached and
// team memories written while the index, the context and recall are read.
func TestScopesConcurrent(t *testing.T) {
	g := scopeRepo(t, "me", 20, nil)
	eng := scopeRepo(t, "eng", 20, nil)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				_ = g.Index(KindUser)
				_ = g.Context(ContextOptions{MaxBytes: 2000})
				_, _ = g.RecallScoped(context.Background(), "eng fact", recall.Options{}, "")
			}
		}()
	}
	for i := 0; i < 200; i++ {
		if i%2 == 0 {
			_ = g.AttachScopes([]Scope{{"eng", eng}})
		} else {
			_ = g.AttachScopes(nil)
		}
		eng.Put(fmt.Sprintf("user_memory/new-%d.md", i), []byte(mem("", fmt.Sprintf("eng new %d", i), "", "f")))
	}
	close(done)
	wg.Wait()
}
