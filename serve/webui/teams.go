package webui

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/proposal"
)

// The teams page (/teams) of a serve member's worker: each team the user
// belongs to with her role and its waiting proposals; a maintainer
// approves or rejects them there, and a member who may change a team
// promotes one of her memories into it. Every action is asked of the
// team's one writer (TeamDesk), which decides by her role: the page only
// leaves out the buttons her role could not use.

// TeamDesk is what the page reaches of the user's teams: their names and
// her roles, each team's waiting proposals, a maintainer's verdict and a
// promotion, each asked of the team's writer with the worker's uid.
type TeamDesk interface {
	Teams() []TeamRole
	Proposals(ctx context.Context, name string) ([]proposal.Proposal, error)
	// Verdict approves (at tip) or rejects branch; it returns what was
	// done, in words.
	Verdict(ctx context.Context, name, branch, tip string, approve bool) (string, error)
	// Promote copies the user's committed memory rel into the team; it
	// returns what became of it (a commit or a proposal), in words.
	Promote(ctx context.Context, name, rel string) (string, error)
	// Timeline is the team's latest n commits, newest first.
	Timeline(name string, n int) ([]gitrepo.CommitInfo, error)
}

// teamTimeline is how many of a team's commits its section shows.
const teamTimeline = 10

// TeamRole is one team of the user and her role in it.
type TeamRole struct {
	Name string
	Role team.Role
}

// teamRow is one team on the page.
type teamRow struct {
	Name, Role        string
	Approves, Mutates bool
	Proposals         []proposal.Proposal
	Timeline          []gitrepo.CommitInfo
	Err               string
}

// teams answers /teams.
func (s *Server) teams(v *view) {
	var rows []teamRow
	if d := s.cfg.Teams; d != nil {
		for _, t := range d.Teams() {
			row := teamRow{Name: t.Name, Role: string(t.Role), Approves: t.Role.Approves(), Mutates: t.Role.Mutates()}
			ps, err := d.Proposals(v.r.Context(), t.Name)
			if err != nil {
				s.log.Warn("web page cannot list a team's proposals", "team", t.Name, "err", err)
				row.Err = "the team's writer did not answer; try again"
			}
			row.Proposals = ps
			if row.Timeline, err = d.Timeline(t.Name, teamTimeline); err != nil {
				s.log.Warn("web page cannot read a team's timeline", "team", t.Name, "err", err)
			}
			rows = append(rows, row)
		}
	}
	var mine []string
	for _, k := range []memgraph.Kind{memgraph.KindUser, memgraph.KindCharacter} {
		for _, m := range v.rt.Graph.Memories(k) {
			mine = append(mine, m.Path)
		}
	}
	s.render(v.w, "teams", http.StatusOK, s.page(v, "teams", "Teams", map[string]any{"Teams": rows, "Memories": mine}))
}

// teamVerdict approves or rejects a team's proposal (POST /teams/approve,
// /teams/reject: team, branch, tip as the page showed them).
func (s *Server) teamVerdict(v *view, approve bool) {
	d := s.cfg.Teams
	if d == nil {
		s.failed(v, http.StatusConflict, fmt.Errorf("%w: no team here", ErrRefused))
		return
	}
	ctx, cancel := context.WithTimeout(v.r.Context(), actionTimeout)
	defer cancel()
	f := v.r.PostFormValue
	msg, err := d.Verdict(ctx, f("team"), f("branch"), f("tip"), approve)
	s.teamDone(v, msg, err)
}

// teamPromote promotes one of the user's memories into a team (POST
// /teams/promote: team, path).
func (s *Server) teamPromote(v *view) {
	d := s.cfg.Teams
	if d == nil {
		s.failed(v, http.StatusConflict, fmt.Errorf("%w: no team here", ErrRefused))
		return
	}
	ctx, cancel := context.WithTimeout(v.r.Context(), actionTimeout)
	defer cancel()
	msg, err := d.Promote(ctx, v.r.PostFormValue("team"), v.r.PostFormValue("path"))
	s.teamDone(v, msg, err)
}

// teamDone answers a team action: its result, or its refusal with a
// status saying whose it is (the role, the proposal, the team's gate).
func (s *Server) teamDone(v *view, msg string, err error) {
	switch {
	case err == nil:
		s.done(v, msg)
	case errors.Is(err, team.ErrNotMaintainer), errors.Is(err, team.ErrReadOnly), errors.Is(err, team.ErrNotMember):
		s.failed(v, http.StatusForbidden, err)
	case errors.Is(err, proposal.ErrNoProposal):
		s.failed(v, http.StatusNotFound, err)
	case errors.Is(err, proposal.ErrMoved), errors.Is(err, proposal.ErrConflict), errors.Is(err, team.ErrPathTaken):
		s.failed(v, http.StatusConflict, err)
	case refusedByGate(err):
		// The team's gate: file, line and rule, never a value.
		s.failed(v, http.StatusUnprocessableEntity, err)
	default:
		s.log.Warn("team action failed", "err", err)
		s.failed(v, http.StatusInternalServerError, errors.New("the team action failed; see the daemon's log"))
	}
}

// refusedByGate reports whether err is one of the gate's reasons.
func refusedByGate(err error) bool {
	var r *tracker.RefusedError
	if errors.As(err, &r) {
		return true
	}
	for _, reason := range []error{tracker.ErrSecret, tracker.ErrInvalid, tracker.ErrBadName, tracker.ErrTooLarge, tracker.ErrNotMemory, tracker.ErrReadOnly} {
		if errors.Is(err, reason) {
			return true
		}
	}
	return false
}
