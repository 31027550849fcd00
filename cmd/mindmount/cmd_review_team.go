package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os/exec"
	"strings"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/proposal"
)

// Reviewing a joined team's proposals on a laptop: "review list|show|
// approve|reject --team TEAM REPO [BRANCH]". Every commit and branch
// deletion goes through tracker.Alone on the team's clone, so the gate
// judges it; a daemon mounting REPO sees the clone's HEAD move and
// reloads, as after a git command.

// teamOptions are the flags of "review list" and "review show".
type teamOptions struct {
	team string
}

func (o *teamOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.team, "team", "", "the joined team `TEAM` whose proposals to review")
}

var teamReviewListCommand = newCommand(command{
	name:    "list",
	usage:   "review list --team TEAM REPO",
	summary: "list the proposals waiting in a joined team (branches mindmount/proposal/<user>/<n>)",
	help: `Lists the proposals waiting in the clone of TEAM joined to REPO: branch,
tip, author and the files each changes. Any member may list; approve and
reject need the maintain role.`,
}, runTeamReviewList)

func runTeamReviewList(ctx context.Context, o *teamOptions, args []string) error {
	if o.team == "" || len(args) != 1 {
		return usageError{"need --team TEAM and REPO"}
	}
	var ps []proposal.Proposal
	_, r, err := joinedTeam(args[0], o.team)
	if err == nil {
		ps, err = proposal.List(r)
	} else if res, served, serr := servedTeamReview(ctx, args[0], control.TeamReviewAsk{Team: o.team, Op: string(host.TeamList)}); served {
		ps, err = res.Proposals, serr
	}
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		fmt.Fprintf(stdout, "No proposal waits in team %s.\n", o.team)
	}
	for _, p := range ps {
		fmt.Fprintf(stdout, "%s\ttip %s\tby %s\t%s\n", p.Branch, p.Tip, p.Author, strings.Join(p.Paths, " "))
	}
	return nil
}

// runReviewShowOrTeam is "review show": a dream's, or with --team a
// team proposal's.
func runReviewShowOrTeam(ctx context.Context, o *teamOptions, args []string) error {
	if o.team == "" {
		return runReviewShow(ctx, &noOptions{}, args)
	}
	if len(args) != 2 {
		return usageError{"need REPO and BRANCH"}
	}
	a, r, err := joinedTeam(args[0], o.team)
	if err != nil {
		return err
	}
	p, err := proposal.Find(r, args[1])
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s tip %s by %s\n", p.Branch, p.Tip, p.Author)
	cmd := exec.Command("git", "-C", a.Dir, "diff", "--no-ext-diff", "--no-color", p.Base, p.Tip, "--")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd.Run()
}

// teamReviewVerdict approves (at tip) or rejects proposal BRANCH of the
// team joined to REPO (args: REPO BRANCH); the member must maintain it.
func teamReviewVerdict(ctx context.Context, name, tip string, approve bool, args []string) error {
	if len(args) != 2 {
		return usageError{"need REPO and BRANCH"}
	}
	a, r, err := joinedTeam(args[0], name)
	if err != nil {
		return servedTeamVerdict(ctx, name, tip, approve, args, err)
	}
	if !a.Role.Approves() {
		return fmt.Errorf("%w: your role in team %s is %s; approving and rejecting need maintain", errTeamRole, name, a.Role)
	}
	w, who := tracker.Alone{Repo: r}, gitrepo.Writer(memberName())
	if !approve {
		p, err := proposal.Find(r, args[1])
		if err == nil {
			err = proposal.Reject(ctx, w, r, p.Branch, p.Tip, who)
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "mindmount: rejected %s; its branch is deleted\n", p.Branch)
		return nil
	}
	hash, err := proposal.Approve(ctx, w, r, args[1], tip, who)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "mindmount: approved %s: merged into team %s as %s\n", args[1], name, gitrepo.ShortHash(hash))
	return nil
}

// errTeamRole: the member's role does not allow the command.
var errTeamRole = errors.New("not allowed by your role")

// joinedTeam is the attachment and repository of team name joined to
// the personal repository dir.
func joinedTeam(dir, name string) (team.Attachment, *gitrepo.Repo, error) {
	if err := team.ValidName(name); err != nil {
		return team.Attachment{}, nil, err
	}
	gitDir, err := personalGitDir(dir)
	if err != nil {
		return team.Attachment{}, nil, err
	}
	as, err := team.Attached(gitDir)
	if err != nil {
		return team.Attachment{}, nil, err
	}
	for _, a := range as {
		if a.Name == name {
			r, err := gitrepo.Open(a.Dir)
			return a, r, err
		}
	}
	return team.Attachment{}, nil, fmt.Errorf("%w: %s", team.ErrNotMember, name)
}

// servedTeamReview asks the serve worker of the personal repository dir
// to pass ask on to the team's writer, which decides by the user's role.
// served is false when dir has no such daemon (not under serve): the
// caller keeps its own error then.
func servedTeamReview(ctx context.Context, dir string, ask control.TeamReviewAsk) (res host.TeamResult, served bool, err error) {
	gitDir, gerr := recallGitDir(dir)
	if gerr != nil {
		return res, false, nil
	}
	a, err := control.Ask(ctx, gitDir, control.Request{Verb: control.TeamReview, TeamReview: &ask})
	switch {
	case errors.Is(err, control.ErrNoDaemon), errors.Is(err, control.ErrNotServed):
		return res, false, nil
	case err != nil:
		return res, true, err
	}
	return res, true, json.Unmarshal(a.Data, &res)
}

// servedTeamVerdict is approve or reject of a team the repository is not
// joined to on this machine: asked of its serve worker (args: REPO
// BRANCH); notJoined is the error when no worker serves it.
func servedTeamVerdict(ctx context.Context, name, tip string, approve bool, args []string, notJoined error) error {
	ask := control.TeamReviewAsk{Team: name, Op: string(host.TeamReject), Branch: args[1], Tip: tip}
	if approve {
		ask.Op = string(host.TeamApprove)
		if tip == "" {
			return usageError{"approve needs --tip: the proposal's tip as review list shows it"}
		}
	} else if ask.Tip == "" {
		// A rejection names the branch only; it is rejected at the tip
		// the list shows now.
		res, served, err := servedTeamReview(ctx, args[0], control.TeamReviewAsk{Team: name, Op: string(host.TeamList)})
		if !served {
			return notJoined
		}
		if err != nil {
			return err
		}
		for _, p := range res.Proposals {
			if p.Branch == args[1] {
				ask.Tip = p.Tip
			}
		}
		if ask.Tip == "" {
			return fmt.Errorf("%w: %s", proposal.ErrNoProposal, args[1])
		}
	}
	res, served, err := servedTeamReview(ctx, args[0], ask)
	switch {
	case !served:
		return notJoined
	case err != nil:
		return err
	case approve:
		fmt.Fprintf(stdout, "mindmount: approved %s: merged into team %s as %s\n", args[1], name, gitrepo.ShortHash(res.Commit))
	default:
		fmt.Fprintf(stdout, "mindmount: rejected %s; its branch is deleted\n", args[1])
	}
	return nil
}
