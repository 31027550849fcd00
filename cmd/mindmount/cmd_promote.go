package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/proposal"
)

// promoteCommand is "mindmount promote".
var promoteCommand = newCommand(command{
	name:    "promote",
	usage:   "promote REPO PATH --team TEAM [--team-dir DIR] [--user NAME]",
	summary: "copy a personal memory into a team's repository",
	help: `Copies the memory PATH, as last committed in the personal repository
REPO, into the repository of team TEAM at the same path, and commits it
there. The copy has no access log (how often you used it says nothing
to the team) and says where it came from in its frontmatter:
promoted_from: USER:COMMIT:PATH.

The team's repository is the one attached to REPO as TEAM, or the
directory --team-dir names. The commit goes through the team
repository's own checks, as any write there: a memory holding a secret,
an invalid memory, or a path the team already has is refused and
nothing is committed. A read-only member cannot promote; a proposer's
promotion is a proposal branch (mindmount/proposal/<you>/<n>) that a
maintainer approves ("mindmount review approve --team").

Under "mindmount serve", REPO is your own repository there (ROOT/users/
<you>): your worker makes the copy and hands it to the team's writer,
which decides by your role in ROOT/teams.conf and names you.

--user names you in promoted_from and the commit (default: $USER).`,
}, runPromote)

// promoteOptions are the flags of "mindmount promote".
type promoteOptions struct {
	team, teamDir, user string
}

func (o *promoteOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.team, "team", "", "the `TEAM` to promote to")
	fl.StringVar(&o.teamDir, "team-dir", "", "the team repository's `DIR` (default: the team attached to REPO)")
	fl.StringVar(&o.user, "user", "", "your `NAME` in promoted_from (default: $USER)")
}

// Why a promotion is refused.
var (
	errPromoteExists   = errors.New("the team already has a memory at this path")
	errPromoteReadOnly = errors.New("your role in this team is read")
	errPromoteRefused  = errors.New("the team repository refuses the memory")
)

// runPromote copies a committed personal memory into a team repository.
func runPromote(ctx context.Context, o *promoteOptions, args []string) error {
	if len(args) != 2 || o.team == "" {
		return errUsage
	}
	if !memgraph.ValidScopeName(o.team) {
		return fmt.Errorf("--team %q: %w", o.team, memgraph.ErrBadScopeName)
	}
	rel, ok := memgraph.CleanRel(args[1])
	if !ok || !memgraph.IsMemoryPath(rel) {
		return fmt.Errorf("%s: not a memory file of the repository", memgraph.SafeLine(args[1]))
	}
	dir, role, err := promoteTeamDir(args[0], o)
	if errors.Is(err, memgraph.ErrUnknownScope) {
		// Not joined here: under serve, the user's worker promotes
		// through the team's writer, which decides by her role.
		if done, serr := servedPromote(ctx, args[0], o.team, rel); done {
			return serr
		}
	}
	if err != nil {
		return err
	}
	user := o.user
	if user == "" {
		user = os.Getenv("USER")
	}
	if user == "" {
		user = "unknown"
	}
	if err := requireMindmountRepo(args[0]); err != nil {
		return err
	}
	personal, err := gitrepo.Open(args[0])
	if err != nil {
		return err
	}
	out, err := promotedCopy(personal, user, rel)
	if err != nil {
		return err
	}
	return promoteInto(ctx, dir, role, o.team, user, rel, out)
}

// promoteInto writes the promoted copy out at rel into the team's clone
// in dir: a proposal branch for a proposer, else a commit, through the
// team repository's gate.
func promoteInto(ctx context.Context, dir string, role team.Role, name, user, rel string, out []byte) error {
	r, err := gitrepo.Open(dir)
	if err != nil {
		return fmt.Errorf("team %s: %w", name, err)
	}
	if _, exists, err := r.ReadHead(rel); err != nil {
		return err
	} else if exists {
		return fmt.Errorf("%s in team %s: %w; change it there instead", rel, name, errPromoteExists)
	}
	msg := "mindmount promote: " + rel + " from " + memgraph.SafeLine(user) + "\n\nMindmount-User: " + memgraph.SafeLine(user)
	changes := []gitrepo.Change{{Path: rel, Data: out}}
	w := tracker.Alone{Repo: r}
	var hash, what string
	if role == team.Propose {
		var p proposal.Proposal
		p, err = proposal.Propose(ctx, w, r, user, changes, msg, gitrepo.Writer(user))
		hash, what = p.Tip, "proposal "+p.Branch
	} else {
		hash, err = w.Apply(ctx, tracker.Change{Changes: changes, Message: msg, Author: gitrepo.Mindmount, Worktree: true})
		what = "commit"
	}
	var refused *tracker.RefusedError
	if errors.As(err, &refused) {
		// The team's gate: file, line and rule, never a value.
		return fmt.Errorf("%s: %w: %w", rel, errPromoteRefused, err)
	}
	if err != nil {
		return fmt.Errorf("promote to team %s: %w", name, err)
	}
	fmt.Fprintf(stdout, "promoted %s to team %s (%s %s)\n", rel, name, what, gitrepo.ShortHash(hash))
	return nil
}

// servedPromote asks the serve worker of the personal repository repo to
// promote its committed memory rel into team name (done false: no worker
// serves repo).
func servedPromote(ctx context.Context, repo, name, rel string) (done bool, err error) {
	gitDir, gerr := recallGitDir(repo)
	if gerr != nil {
		return false, nil
	}
	a, err := control.Ask(ctx, gitDir, control.Request{Verb: control.TeamPromote, TeamPromote: &control.TeamPromoteAsk{Team: name, Path: rel}})
	switch {
	case errors.Is(err, control.ErrNoDaemon), errors.Is(err, control.ErrNotServed):
		return false, nil
	case err != nil:
		return true, fmt.Errorf("%s: %w", rel, err)
	}
	var res host.TeamResult
	if err := json.Unmarshal(a.Data, &res); err != nil {
		return true, err
	}
	if res.Proposal != "" {
		fmt.Fprintf(stdout, "promoted %s to team %s as proposal %s (%s)\n", rel, name, res.Proposal, res.Note)
	} else {
		fmt.Fprintf(stdout, "promoted %s to team %s (commit %s)\n", rel, name, gitrepo.ShortHash(res.Commit))
	}
	return true, nil
}

// promoteTeamDir is --team-dir (role write), or the directory and role of
// the team attached to repo under that name; a read-only member is
// refused.
func promoteTeamDir(repo string, o *promoteOptions) (string, team.Role, error) {
	if o.teamDir != "" {
		return o.teamDir, team.Write, nil
	}
	teams, err := teamsOf(repo)
	if err != nil {
		return "", "", err
	}
	for _, t := range teams {
		if t.Name == o.team {
			if team.Role(t.Role) == team.Read {
				return "", "", fmt.Errorf("team %s: %w", o.team, errPromoteReadOnly)
			}
			return t.Dir, team.Role(t.Role), nil
		}
	}
	return "", "", fmt.Errorf("team %s: %w (give its repository with --team-dir)", o.team, memgraph.ErrUnknownScope)
}

// promotedCopy is rel as HEAD of the personal repository r has it, made
// a team's copy (memgraph.Promoted): no access log, promoted_from naming
// user, HEAD and rel. A memory not committed, or not valid, is refused.
func promotedCopy(r *gitrepo.Repo, user, rel string) ([]byte, error) {
	head, err := r.Head()
	if err != nil {
		return nil, err
	}
	data, ok, err := r.ReadHead(rel)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%s is not committed; only a committed memory can be promoted", rel)
	}
	m, probs := memgraph.Parse(rel, data)
	if len(probs) > 0 {
		return nil, fmt.Errorf("%s is not a valid memory: %s", rel, memgraph.SafeLine(probs[0].Msg))
	}
	return memgraph.Promoted(m, memgraph.PromotedFrom(user, head, rel)).Render(), nil
}
