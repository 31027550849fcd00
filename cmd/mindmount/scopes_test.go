package main

import (
	"strings"
	"testing"

	"github.com/mindmount/mindmount/memgraph/scopetest"
)

// TestRecallScopeCanaries: mindmount recall for a user attached to team
// eng, under every --scope, shows no canary of another user or of team
// ops; a team's hits name their scope; an unattached team is refused.
func TestRecallScopeCanaries(t *testing.T) {
	dirs := map[string]string{}
	for _, w := range scopetest.Words {
		d := mgRepo(t, map[string]string{"user.md": "# User\n"})
		scopetest.WriteMemories(t, d, w)
		dirs[w] = d
	}
	saved := teamsOf
	t.Cleanup(func() { teamsOf = saved })
	teamsOf = func(repo string) ([]teamDir, error) {
		return []teamDir{{Name: "eng", Dir: dirs[scopetest.Team], Role: "write"}}, nil
	}
	me := dirs[scopetest.Personal]
	for _, w := range scopetest.Words {
		for _, sc := range []string{"all", "personal", "eng"} {
			want := w
			if sc == "personal" && w == scopetest.Team || sc == "eng" && w == scopetest.Personal {
				want = ""
			}
			out, errs, code := runMindmount(t, "recall", me, w, "--scope", sc, "--json", "--no-wordnet")
			if code != 0 {
				t.Fatalf("recall --scope %s: exit %d %s", sc, code, errs)
			}
			scopetest.Check(t, "mindmount recall --scope "+sc, want, out)
			if want == scopetest.Team && !strings.Contains(out, `"scope": "eng"`) {
				t.Errorf("a team hit does not name its scope:\n%s", out)
			}
		}
		if _, errs, code := runMindmount(t, "recall", me, w, "--scope", "ops"); code == 0 || !strings.Contains(errs, "no such scope") {
			t.Errorf("--scope ops: exit %d %s", code, errs)
		}
	}
}
