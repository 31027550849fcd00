package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/mount"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/proposal"
	"github.com/mindmount/mindmount/serve/webui"
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

// teamDesk is a serve member's worker's way to her teams' writers: the
// control verbs of "mindmount review --team" and "mindmount promote" and
// the web page's teams page (webui.TeamDesk) ask through it. Each
// question goes to the team's writer with this worker's uid, which
// decides by her role; a team she is not in is refused here first.
type teamDesk struct {
	rt    *host.Runtime
	names []string
	roles map[string]team.Role
	dirs  map[string]string

	mu    sync.Mutex
	repos map[string]*gitrepo.Repo // opened for reading once, for Timeline
}

func newTeamDesk(rt *host.Runtime, as []team.Attachment) *teamDesk {
	d := &teamDesk{rt: rt, roles: map[string]team.Role{}, dirs: map[string]string{}, repos: map[string]*gitrepo.Repo{}}
	for _, a := range as {
		d.names = append(d.names, a.Name)
		d.roles[a.Name] = a.Role
		d.dirs[a.Name] = a.Dir
	}
	return d
}

// Timeline is the team's latest commits, read by this worker through the
// team's group (objects only: no git command runs in another uid's
// repository).
func (d *teamDesk) Timeline(name string, n int) ([]gitrepo.CommitInfo, error) {
	if _, _, err := d.client(name); err != nil {
		return nil, err
	}
	d.mu.Lock()
	r := d.repos[name]
	if r == nil {
		var err error
		if r, err = gitrepo.Open(d.dirs[name]); err != nil {
			d.mu.Unlock()
			return nil, err
		}
		d.repos[name] = r
	}
	d.mu.Unlock()
	return r.Recent(n)
}

// client is the team's writer, if the user belongs to the team.
func (d *teamDesk) client(name string) (host.TeamClient, team.Role, error) {
	role, ok := d.roles[name]
	if !ok {
		return host.TeamClient{}, "", fmt.Errorf("%w: %q", team.ErrNotMember, name)
	}
	return host.TeamClient{Socket: host.TeamSocket(d.rt.Root, name)}, role, nil
}

// review lists a team's proposals, or approves or rejects one.
func (d *teamDesk) review(ctx context.Context, name string, op host.TeamOp, branch, tip string) (host.TeamResult, error) {
	c, _, err := d.client(name)
	if err != nil {
		return host.TeamResult{}, err
	}
	return c.Review(ctx, op, branch, tip)
}

// promote copies the user's committed memory rel (her repository's
// writer reads its HEAD) into the team: a commit or a proposal by her
// role; the team's gate judges it (secrets, names, validation).
func (d *teamDesk) promote(ctx context.Context, name, path string) (host.TeamResult, error) {
	c, role, err := d.client(name)
	if err != nil {
		return host.TeamResult{}, err
	}
	if !role.Mutates() {
		return host.TeamResult{}, fmt.Errorf("%w: your role in %s is %s", team.ErrReadOnly, name, role)
	}
	rel, ok := memgraph.CleanRel(path)
	if !ok || !memgraph.IsMemoryPath(rel) {
		return host.TeamResult{}, fmt.Errorf("%s: not a memory file of the repository", memgraph.SafeLine(path))
	}
	out, err := promotedCopy(d.rt.Repo, d.rt.ID, rel) // cmd_promote.go
	if err != nil {
		return host.TeamResult{}, err
	}
	return c.Promote(ctx, rel, out)
}

// Teams, Proposals, Verdict and Promote are the teams page's.
func (d *teamDesk) Teams() []webui.TeamRole {
	var out []webui.TeamRole
	for _, n := range d.names {
		out = append(out, webui.TeamRole{Name: n, Role: d.roles[n]})
	}
	return out
}

func (d *teamDesk) Proposals(ctx context.Context, name string) ([]proposal.Proposal, error) {
	res, err := d.review(ctx, name, host.TeamList, "", "")
	return res.Proposals, err
}

func (d *teamDesk) Verdict(ctx context.Context, name, branch, tip string, approve bool) (string, error) {
	if !approve {
		_, err := d.review(ctx, name, host.TeamReject, branch, tip)
		return fmt.Sprintf("%s rejected; its branch is deleted", branch), err
	}
	res, err := d.review(ctx, name, host.TeamApprove, branch, tip)
	return fmt.Sprintf("%s approved: merged into team %s as %s", branch, name, gitrepo.ShortHash(res.Commit)), err
}

func (d *teamDesk) Promote(ctx context.Context, name, rel string) (string, error) {
	res, err := d.promote(ctx, name, rel)
	if res.Proposal != "" {
		return fmt.Sprintf("%s promoted to team %s as proposal %s", rel, name, res.Proposal), err
	}
	return fmt.Sprintf("%s promoted to team %s (commit %s)", rel, name, gitrepo.ShortHash(res.Commit)), err
}

// handleTeamVerbs answers "mindmount review --team" and "mindmount
// promote" run by the user on her repository, through d.
func handleTeamVerbs(rt *host.Runtime, d *teamDesk) {
	answer := func(res host.TeamResult, err error) (control.Answer, error) {
		if err != nil {
			return control.Answer{}, err
		}
		data, err := json.Marshal(res)
		return control.Answer{Data: data}, err
	}
	rt.Handle(control.TeamReview, func(ctx context.Context, req control.Request) (control.Answer, error) {
		a := req.TeamReview
		if a == nil {
			return control.Answer{}, fmt.Errorf("team review: nothing asked")
		}
		return answer(d.review(ctx, a.Team, host.TeamOp(a.Op), a.Branch, a.Tip))
	})
	rt.Handle(control.TeamPromote, func(ctx context.Context, req control.Request) (control.Answer, error) {
		a := req.TeamPromote
		if a == nil {
			return control.Answer{}, fmt.Errorf("team promote: nothing asked")
		}
		return answer(d.promote(ctx, a.Team, a.Path))
	})
}

// proposeChange forwards a change the user's consolidation would make to
// a team's memory as a proposal (never a write, whatever her role); a
// reader's consolidation proposes nothing.
func (d *teamDesk) proposeChange(ctx context.Context, p consolidate.TeamProposal) error {
	c, role, err := d.client(p.Team)
	if err != nil {
		return err
	}
	if !role.Mutates() {
		return fmt.Errorf("%w: your role in %s is %s", team.ErrReadOnly, p.Team, role)
	}
	base := ""
	if p.Base != nil {
		base = gitrepo.BlobID(p.Base)
	}
	_, err = c.Propose(ctx, p.Path, base, p.Content, "from a conversation: "+p.Source)
	return err
}

// dreamProposals hands consolidation's team proposals to the worker's
// desk once it has one (the consolidator is configured before the
// runtime, and so the desk, exists).
type dreamProposals struct {
	desk atomic.Pointer[teamDesk]
	log  *slog.Logger
}

func (dp *dreamProposals) forward(p consolidate.TeamProposal) {
	d := dp.desk.Load()
	if d == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.proposeChange(ctx, p); err != nil {
		dp.log.Warn("a team proposal was not handed to the team's writer", "team", p.Team, "path", memgraph.SafeLine(p.Path), "err", err)
	}
}
