package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mindmount/mindmount/fs/mount"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/host"
)

// forwardTeams lets a serve member's worker change the teams its role
// lets it change (propose, write, maintain): each such team's changes
// are staged in a folder of the worker's own under the user's git
// directory (never in the team's tree) and forwarded to the team's
// writer over the socket serve made for it (host.TeamSocket), which
// only the team's group reaches. A reader's teams stay read-only (EROFS
// in the mount, nothing forwarded). A team whose staging folder cannot
// be made stays read-only too.
func forwardTeams(rt *host.Runtime, teams []mount.Team, log *slog.Logger) []mount.Team {
	base := filepath.Join(rt.Repo.GitDir(), "mindmount", "team-stage")
	handleTeamReview(rt, teams)
	handleTeamPromote(rt, teams)
	for i, t := range teams {
		if t.Tracker != nil || !t.Role.Mutates() {
			continue
		}
		dir := filepath.Join(base, t.Name)
		os.RemoveAll(dir) // what a worker staged before it ended was never forwarded
		if err := os.MkdirAll(dir, 0o700); err != nil {
			log.Warn("team stays read-only: no staging folder", "team", t.Name, "err", err)
			continue
		}
		os.Chmod(dir, 0o700)
		teams[i].Forward = teamForward{host.TeamClient{Socket: host.TeamSocket(rt.Root, t.Name)}}
		teams[i].StageDir = dir
	}
	return teams
}

// teamForward is mount.Forwarder over the team's writer's socket.
type teamForward struct{ c host.TeamClient }

func (f teamForward) Put(ctx context.Context, rel, base string, data []byte) error {
	_, err := f.c.Put(ctx, rel, base, data)
	return err
}

func (f teamForward) Remove(ctx context.Context, rel, base string) error {
	_, err := f.c.Remove(ctx, rel, base)
	return err
}

// handleTeamReview answers "mindmount review --team" run by the user on
// her repository: the worker asks the team's writer with its own uid (the
// user's), which decides by her role; a team she is not in is refused
// here, before anything is asked.
func handleTeamReview(rt *host.Runtime, teams []mount.Team) {
	mine := map[string]bool{}
	for _, t := range teams {
		mine[t.Name] = true
	}
	rt.Handle(control.TeamReview, func(ctx context.Context, req control.Request) (control.Answer, error) {
		a := req.TeamReview
		if a == nil {
			return control.Answer{}, fmt.Errorf("team review: nothing asked")
		}
		if !mine[a.Team] {
			return control.Answer{}, fmt.Errorf("%w: %q", team.ErrNotMember, a.Team)
		}
		res, err := host.TeamClient{Socket: host.TeamSocket(rt.Root, a.Team)}.Review(ctx, host.TeamOp(a.Op), a.Branch, a.Tip)
		if err != nil {
			return control.Answer{}, err
		}
		data, err := json.Marshal(res)
		return control.Answer{Data: data}, err
	})
}

// handleTeamPromote answers "mindmount promote" run by the user on her
// repository: the worker (her repository's writer, which reads its HEAD)
// makes the promoted copy and hands it to the team's writer with its own
// uid; the writer's gate judges it (secrets, names, validation) and her
// role decides a commit or a proposal.
func handleTeamPromote(rt *host.Runtime, teams []mount.Team) {
	roles := map[string]team.Role{}
	for _, t := range teams {
		roles[t.Name] = t.Role
	}
	rt.Handle(control.TeamPromote, func(ctx context.Context, req control.Request) (control.Answer, error) {
		a := req.TeamPromote
		if a == nil {
			return control.Answer{}, fmt.Errorf("team promote: nothing asked")
		}
		role, ok := roles[a.Team]
		if !ok {
			return control.Answer{}, fmt.Errorf("%w: %q", team.ErrNotMember, a.Team)
		}
		if !role.Mutates() {
			return control.Answer{}, fmt.Errorf("%w: your role in %s is %s", team.ErrReadOnly, a.Team, role)
		}
		rel, ok := memgraph.CleanRel(a.Path)
		if !ok || !memgraph.IsMemoryPath(rel) {
			return control.Answer{}, fmt.Errorf("%s: not a memory file of the repository", memgraph.SafeLine(a.Path))
		}
		out, err := promotedCopy(rt.Repo, rt.ID, rel) // cmd_promote.go
		if err != nil {
			return control.Answer{}, err
		}
		res, err := host.TeamClient{Socket: host.TeamSocket(rt.Root, a.Team)}.Promote(ctx, rel, out)
		if err != nil {
			return control.Answer{}, err
		}
		data, err := json.Marshal(res)
		return control.Answer{Data: data}, err
	})
}
