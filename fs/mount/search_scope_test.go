package mount

import (
	"testing"

	"github.com/mindmount/mindmount/memgraph/scopetest"
)

// TestSearchFileCanaries: .mindmount/search/<name> of a user attached to
// team eng, for every canary and every scope prefix, shows no canary of
// another user or of team ops; "@eng w" finds eng's, "@personal w" does
// not, and "@ops w" (not attached) is refused.
func TestSearchFileCanaries(t *testing.T) {
	g := scopetest.Graph(t, scopetest.Personal)
	_ = scopetest.Attach(t, g)
	search := searchFunc(g)
	for _, w := range scopetest.Words {
		for _, c := range []struct{ prefix, want string }{
			{"", w}, {"@all ", w}, {"@eng ", scopetest.Team}, {"@personal ", scopetest.Personal}, {"@ops ", ""},
		} {
			want := ""
			if c.want == w {
				want = w
			}
			scopetest.Check(t, "search "+c.prefix+w, want, string(search(c.prefix+w)))
		}
	}
}

// TestSearchFileWithoutTeams: with no team attached, a name starting with
// "@word " is the whole question, as it always was.
func TestSearchFileWithoutTeams(t *testing.T) {
	g := scopetest.Graph(t, scopetest.Personal)
	got := string(searchFunc(g)("@eng " + scopetest.Personal))
	if want := "# Recall: @eng " + scopetest.Personal + "\n"; len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("without teams, the name changed meaning:\n%s", got)
	}
}
