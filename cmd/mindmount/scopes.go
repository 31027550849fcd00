package main

import (
	"fmt"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
)

// teamDir is one team attached to a personal repository: its name (the
// folder under shared/), the directory of its repository and the member's
// role there.
type teamDir struct {
	Name, Dir, Role string
}

// teamsOf lists the teams attached to the personal repository repo: the
// clones "mindmount team join" made under its .git/mindmount/teams/.
var teamsOf = func(repo string) ([]teamDir, error) {
	gitDir, err := personalGitDir(repo)
	if err != nil {
		return nil, err
	}
	as, err := team.Attached(gitDir)
	if err != nil {
		return nil, err
	}
	out := make([]teamDir, len(as))
	for i, a := range as {
		out[i] = teamDir{Name: a.Name, Dir: a.Dir, Role: string(a.Role)}
	}
	return out, nil
}

// attachTeams scans each team attached to g's repository and attaches it
// to g, so the indexes, CONTEXT.md and recall read across them. The
// returned function closes the teams' graphs.
func attachTeams(g *memgraph.Graph) (func(), error) {
	teams, err := teamsOf(g.Root())
	if err != nil || len(teams) == 0 {
		return func() {}, err
	}
	scopes := make([]memgraph.Scope, 0, len(teams))
	closeAll := func() {
		for _, s := range scopes {
			s.Graph.Close()
		}
	}
	for _, t := range teams {
		tg, err := memgraph.Scan(t.Dir)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("team %s: %w", t.Name, err)
		}
		scopes = append(scopes, memgraph.Scope{Name: t.Name, Graph: tg})
	}
	if err := g.AttachScopes(scopes); err != nil {
		closeAll()
		return nil, err
	}
	return closeAll, nil
}
