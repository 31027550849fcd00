package consolidate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/memgraph"
)

// teamEnv is an env whose consolidator is offered team eng's memories
// as read-only candidates; proposals handed over are collected.
func teamEnv(t *testing.T) (e *env, teamFile string, got *[]TeamProposal) {
	t.Helper()
	e = newEnv(t, "ollama", nil)
	dir := t.TempDir()
	teamFile = filepath.Join(dir, "user_memory", "deploy-freeze.md")
	os.MkdirAll(filepath.Dir(teamFile), 0o755)
	os.WriteFile(teamFile, []byte(memoryFile("The team never deploys on Fridays", "Deploy Freeze", "Nobody deploys on Fridays.")), 0o644)
	team, err := memgraph.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(team.Close)
	var ps []TeamProposal
	e.cfg.Scopes = []memgraph.Scope{{Name: "eng", Graph: team}}
	e.cfg.OnProposal = func(p TeamProposal) { ps = append(ps, p) }
	e.restart()
	return e, teamFile, &ps
}

// TestTeamCandidates: a fact the team already knows is recognised (NONE)
// and nothing is written; an update aimed at the team's memory becomes a
// proposal to the team with the changed file, and neither the team's file
// nor the personal repository gets it.
func TestTeamCandidates(t *testing.T) {
	fact := Fact{Kind: "user", Slug: "deploy-freeze", Description: "No deploys on Fridays", Fact: "The team does not deploy on Fridays."}
	for _, c := range []struct {
		action    Action
		unchanged int
		proposals int
		added     int
	}{
		{ActionNone, 1, 0, 0},
		{ActionUpdate, 0, 1, 0},
		{ActionDelete, 0, 1, 1},
	} {
		t.Run(string(c.action), func(t *testing.T) {
			e, teamFile, got := teamEnv(t)
			before, _ := os.ReadFile(teamFile)
			e.addTranscript("transcripts/s1.md", "User: We never deploy on Fridays, and now not on Thursdays either.\nAssistant: Noted.\n")
			e.script([]Fact{fact}, []Decision{{Fact: 0, Action: c.action, Target: "shared/eng/user_memory/deploy-freeze", Text: "Nobody deploys on Thursdays or Fridays."}})
			rep := e.run()
			if calls := e.srv.CallsOf(llmtest.KindDecide); len(calls) != 1 || !strings.Contains(calls[0].Prompt, "shared/eng/user_memory/deploy-freeze") {
				t.Fatalf("the team memory was not offered as a candidate: %+v", calls)
			}
			if rep.Unchanged != c.unchanged || len(rep.Proposals) != c.proposals || len(*got) != c.proposals || rep.Added != c.added || rep.Updated != 0 {
				t.Fatalf("report %+v, handed %d proposals", rep, len(*got))
			}
			if after, _ := os.ReadFile(teamFile); string(after) != string(before) {
				t.Error("the team's memory was written")
			}
			if e.exists("shared") || e.exists("user_memory/deploy-freeze.md") && c.action != ActionDelete {
				t.Error("the team's memory was copied into the personal repository")
			}
			if c.proposals == 1 {
				p := (*got)[0]
				if p.Team != "eng" || p.Path != "user_memory/deploy-freeze.md" || p.Action != c.action || string(p.Base) != string(before) {
					t.Errorf("proposal %+v", p)
				}
				want := "Nobody deploys on Thursdays or Fridays."
				if c.action == ActionDelete {
					want = "status: contradicted"
				}
				if !strings.Contains(string(p.Content), want) {
					t.Errorf("proposed content lacks %q:\n%s", want, p.Content)
				}
			}
			e.checkGit()
		})
	}
}
