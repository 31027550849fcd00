package memgraph

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/memgraph/recall"
)

func TestFuseRanks(t *testing.T) {
	h := func(p string, s float64) recall.Hit { return recall.Hit{Path: p, Score: s} }
	for _, c := range []struct {
		name  string
		lists [][]recall.Hit
		k     int
		want  string
	}{
		{"interleaves by rank", [][]recall.Hit{{h("a", 9), h("b", 8)}, {h("x", 1), h("y", 0.5)}}, 10, "a x b y"},
		{"tie to the higher score", [][]recall.Hit{{h("a", 1)}, {h("x", 2)}}, 10, "x a"},
		{"equal score: earlier scope", [][]recall.Hit{{h("a", 1)}, {h("x", 1)}}, 10, "a x"},
		{"keeps k", [][]recall.Hit{{h("a", 3), h("b", 2), h("c", 1)}, {h("x", 1)}}, 2, "a x"},
		{"default k is 10", [][]recall.Hit{make([]recall.Hit, 8), make([]recall.Hit, 8)}, 0, strings.TrimSpace(strings.Repeat(" ", 9))},
		{"empty lists", [][]recall.Hit{nil, nil}, 5, ""},
	} {
		got := fuseRanks(c.lists, c.k)
		var names []string
		for _, x := range got {
			names = append(names, x.Path)
		}
		if c.name == "default k is 10" {
			if len(got) != 10 {
				t.Errorf("%s: %d hits", c.name, len(got))
			}
			continue
		}
		if s := strings.Join(names, " "); s != c.want {
			t.Errorf("%s: %q, want %q", c.name, s, c.want)
		}
	}
}

func TestParseScopedQuery(t *testing.T) {
	for _, c := range []struct{ in, sel, q string }{
		{"deploy freeze", "", "deploy freeze"},
		{"@eng deploy freeze", "eng", "deploy freeze"},
		{"@personal  coffee", "personal", "coffee"},
		{"@eng", "", "@eng"},
		{"@ eng", "", "@ eng"},
		{"email @eng", "", "email @eng"},
	} {
		sel, q := ParseScopedQuery(c.in)
		if sel != c.sel || q != c.q {
			t.Errorf("ParseScopedQuery(%q) = %q, %q; want %q, %q", c.in, sel, q, c.sel, c.q)
		}
	}
}

func FuzzParseScopedQuery(f *testing.F) {
	for _, s := range []string{"@eng q", "q", "@", "@ ", "@all  x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		sel, q := ParseScopedQuery(name)
		if sel == "" && q != name {
			t.Fatalf("no scope but the question changed: %q -> %q", name, q)
		}
		if sel != "" && (strings.ContainsAny(sel, " ") || !strings.HasPrefix(name, "@"+sel+" ") || !strings.HasSuffix(name, q)) {
			t.Fatalf("%q -> %q, %q", name, sel, q)
		}
	})
}

// TestRecallScoped: hits of every selected scope, each labelled; one team
// alone; personal alone is what RecallContext gives; an unknown team is
// refused; with no team attached nothing changes.
func TestRecallScoped(t *testing.T) {
	ctx := context.Background()
	g := scopeRepo(t, "kestrel", 3, nil)
	eng := scopeRepo(t, "kestrel", 3, nil)
	ops := scopeRepo(t, "kestrel", 2, nil)
	before := g.RecallContext(ctx, "kestrel fact", recall.Options{})
	for _, sel := range []string{"", ScopeAll, ScopePersonal} {
		got, err := g.RecallScoped(ctx, "kestrel fact", recall.Options{}, sel)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(before) {
			t.Errorf("no team, scope %q: %v, %v", sel, got, err)
		}
	}
	if _, err := g.RecallScoped(ctx, "kestrel", recall.Options{}, "eng"); !errors.Is(err, ErrUnknownScope) {
		t.Errorf("unattached team: %v", err)
	}
	if err := g.AttachScopes([]Scope{{"eng", eng}, {"ops", ops}}); err != nil {
		t.Fatal(err)
	}
	count := func(sel string) map[string]int {
		hits, err := g.RecallScoped(ctx, "kestrel fact", recall.Options{K: 50}, sel)
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, h := range hits {
			s, rel := ScopeOf(h.Path)
			if s == ScopePersonal && g.Get(rel) == nil || s != ScopePersonal && !strings.HasPrefix(h.Path, SharedPrefix(s)) {
				t.Errorf("scope %q: hit %q is not where its label says", sel, h.Path)
			}
			n[s]++
		}
		return n
	}
	for sel, want := range map[string]string{
		"":            "map[eng:4 ops:3 personal:4]",
		ScopeAll:      "map[eng:4 ops:3 personal:4]",
		ScopePersonal: "map[personal:4]",
		"eng":         "map[eng:4]",
		"ops":         "map[ops:3]",
	} {
		if got := fmt.Sprint(count(sel)); got != want {
			t.Errorf("scope %q: %s, want %s", sel, got, want)
		}
	}
	if hits, _ := g.RecallScoped(ctx, "kestrel fact", recall.Options{K: 3}, ""); len(hits) != 3 {
		t.Errorf("K 3 across scopes: %d hits", len(hits))
	}
}

// scopeBenchGraph is a graph of n memories whose descriptions draw on a
// shared vocabulary, so every query matches many of them.
func scopeBenchGraph(b *testing.B, n int, seed int) *Graph {
	b.Helper()
	words := strings.Fields("deploy coffee pager rotate tea review oncall budget travel python golang allergy meeting friday office garden")
	g, err := Scan(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		w1, w2 := words[(i*7+seed)%len(words)], words[(i*13+seed*3)%len(words)]
		g.Put(fmt.Sprintf("user_memory/m%05d.md", i), []byte(mem("", fmt.Sprintf("%s and %s note %d", w1, w2, i), "", "The user mentioned "+w1+" near "+w2+".", "01.01.26")))
	}
	b.Cleanup(g.Close)
	return g
}

// BenchmarkRecallScoped: one query across the personal graph and two
// teams of 10,000 memories each, against the personal graph alone;
// reports p50 and p95 of each and the ratio of the p95s.
func BenchmarkRecallScoped(b *testing.B) {
	g := scopeBenchGraph(b, 10000, 0)
	if err := g.AttachScopes([]Scope{{"eng", scopeBenchGraph(b, 10000, 1)}, {"ops", scopeBenchGraph(b, 10000, 2)}}); err != nil {
		b.Fatal(err)
	}
	queries := []string{"deploy on friday", "what does the user drink, coffee or tea?", "pager rotation oncall", "python review", "garden office budget"}
	ctx := context.Background()
	run := func(sel, q string) time.Duration {
		t0 := time.Now()
		if _, err := g.RecallScoped(ctx, q, recall.Options{K: 10}, sel); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	for _, q := range queries { // warm every index before timing
		run(ScopeAll, q)
	}
	var all, personal []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ { // alternate, so both see the same load
		all = append(all, run(ScopeAll, queries[i%len(queries)]))
		personal = append(personal, run(ScopePersonal, queries[i%len(queries)]))
	}
	pct := func(d []time.Duration, p int) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)*p/100]
	}
	p50a, p95a, p50p, p95p := pct(all, 50), pct(all, 95), pct(personal, 50), pct(personal, 95)
	b.ReportMetric(float64(p50a.Microseconds()), "p50-all-µs")
	b.ReportMetric(float64(p95a.Microseconds()), "p95-all-µs")
	b.ReportMetric(float64(p50p.Microseconds()), "p50-personal-µs")
	b.ReportMetric(float64(p95p.Microseconds()), "p95-personal-µs")
	b.ReportMetric(float64(p95a)/float64(max(p95p, 1)), "p95-ratio")
}
