package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mindmount/mindmount/fs/mount"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/host"
)

// workerTeams opens the teams a serve worker projects at shared/<team>/:
// the ones serve's configuration gave it when it became its user (the
// same read that gave it their groups, so the kernel lets it read those
// repositories and no others). The worker is not a team's writer: each
// team is only read through its mount (mount.Team without a Tracker:
// every change EROFS). The indexes, CONTEXT.md and recall of the user's
// graph read across them, each hit labelled shared/<team>/. Each team's
// graph follows the team's working tree while the worker runs
// (followTeam): what its writer commits is seen without a restart. The
// returned function stops the following and closes the teams' graphs.
func workerTeams(rt *host.Runtime, as []team.Attachment, log *slog.Logger) ([]mount.Team, func(), error) {
	var out []mount.Team
	var scopes []memgraph.Scope
	var stops []func()
	closeAll := func() {
		for _, stop := range stops {
			stop()
		}
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
		ls := new(tracker.Listeners)
		if stop, err := followTeam(a.Name, g, ls.Listener().Changed, log); err != nil {
			log.Warn("team not followed; its changes show after a restart", "team", a.Name, "err", err)
		} else {
			stops = append(stops, stop)
		}
		scopes = append(scopes, memgraph.Scope{Name: a.Name, Graph: g})
		out = append(out, mount.Team{Name: a.Name, Role: a.Role, Graph: g, Listeners: ls})
	}
	if err := rt.Graph.AttachScopes(scopes); err != nil {
		closeAll()
		return nil, func() {}, fmt.Errorf("attach teams: %w", err)
	}
	// "mindmount recall" run by the user on her repository is answered
	// here, across her teams; in-process it could not read them (the
	// kernel gives their group to this worker only).
	rt.Handle(control.Recall, func(ctx context.Context, req control.Request) (control.Answer, error) {
		return answerRecall(ctx, rt, req) // cmd_recall_daemon.go
	})
	return out, closeAll, nil
}
