package main

import (
	"fmt"

	"github.com/mindmount/mindmount/memgraph"
)

// teamDir is one team attached to a personal repository: its name (the
// folder under shared/), the directory of its repository and the member's
// role there.
type teamDir struct {
	Name, Dir, Role string
}

// teamsOf lists the teams attached to the personal repository repo. The
// team commands (teams, team join) provide it; until then no team is
// attached and every command reads the personal repository alone.
var teamsOf = func(repo string) ([]teamDir, error) { return nil, nil }

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
