package main

import (
	"fmt"
	"log/slog"

	"github.com/mindmount/mindmount/fs/mount"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/host"
)

// workerTeams opens the teams a serve worker projects at shared/<team>/:
// the ones serve's configuration gave it when it became its user (the
// same read that gave it their groups, so the kernel lets it read those
// repositories and no others). The worker is not a team's writer: each
// team is only read through its mount (mount.Team without a Tracker:
// every change EROFS). The indexes, CONTEXT.md and recall of the user's
// graph read across them, each hit labelled shared/<team>/. The returned
// function closes the teams' graphs.
func workerTeams(rt *host.Runtime, as []team.Attachment, log *slog.Logger) ([]mount.Team, func(), error) {
	var out []mount.Team
	var scopes []memgraph.Scope
	closeAll := func() {
		for _, s := range scopes {
			s.Graph.Close()
		}
	}
	for _, a := range as {
		g, err := memgraph.Scan(a.Dir)
		if err != nil {
			// One team the kernel refuses (a group not yet given) or
			// that is broken never keeps the user's own memory away.
			log.Warn("team not projected", "team", a.Name, "err", err)
			continue
		}
		scopes = append(scopes, memgraph.Scope{Name: a.Name, Graph: g})
		out = append(out, mount.Team{Name: a.Name, Role: a.Role, Graph: g})
	}
	if err := rt.Graph.AttachScopes(scopes); err != nil {
		closeAll()
		return nil, func() {}, fmt.Errorf("attach teams: %w", err)
	}
	return out, closeAll, nil
}
