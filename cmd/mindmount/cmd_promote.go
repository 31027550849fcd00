package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
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
nothing is committed. A read-only member cannot promote.

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
	dir, err := promoteTeamDir(args[0], o)
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
	data, head, err := committedMemory(args[0], rel)
	if err != nil {
		return err
	}
	m, probs := memgraph.Parse(rel, data)
	if len(probs) > 0 {
		return fmt.Errorf("%s is not a valid memory: %s", rel, memgraph.SafeLine(probs[0].Msg))
	}
	out := memgraph.Promoted(m, memgraph.PromotedFrom(user, head, rel)).Render()
	team, err := gitrepo.Open(dir)
	if err != nil {
		return fmt.Errorf("team %s: %w", o.team, err)
	}
	if _, exists, err := team.ReadHead(rel); err != nil {
		return err
	} else if exists {
		return fmt.Errorf("%s in team %s: %w; change it there instead", rel, o.team, errPromoteExists)
	}
	msg := "mindmount promote: " + rel + " from " + memgraph.SafeLine(user) + "\n\nMindmount-User: " + memgraph.SafeLine(user)
	hash, err := tracker.Alone{Repo: team}.Apply(ctx, tracker.Change{
		Changes: []gitrepo.Change{{Path: rel, Data: out}}, Message: msg, Author: gitrepo.Mindmount, Worktree: true,
	})
	var refused *tracker.RefusedError
	if errors.As(err, &refused) {
		// The team's gate: file, line and rule, never a value.
		return fmt.Errorf("%s: %w: %w", rel, errPromoteRefused, err)
	}
	if err != nil {
		return fmt.Errorf("commit to team %s: %w", o.team, err)
	}
	fmt.Fprintf(stdout, "promoted %s to team %s (commit %s)\n", rel, o.team, gitrepo.ShortHash(hash))
	return nil
}

// promoteTeamDir is --team-dir, or the directory of the team attached to
// repo under that name; a read-only member is refused.
func promoteTeamDir(repo string, o *promoteOptions) (string, error) {
	if o.teamDir != "" {
		return o.teamDir, nil
	}
	teams, err := teamsOf(repo)
	if err != nil {
		return "", err
	}
	for _, t := range teams {
		if t.Name == o.team {
			if t.Role == "read" {
				return "", fmt.Errorf("team %s: %w", o.team, errPromoteReadOnly)
			}
			return t.Dir, nil
		}
	}
	return "", fmt.Errorf("team %s: %w (give its repository with --team-dir)", o.team, memgraph.ErrUnknownScope)
}

// committedMemory reads rel as HEAD of the repository in dir has it.
func committedMemory(dir, rel string) (data []byte, head string, err error) {
	if err := requireMindmountRepo(dir); err != nil {
		return nil, "", err
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		return nil, "", err
	}
	if head, err = r.Head(); err != nil {
		return nil, "", err
	}
	data, ok, err := r.ReadHead(rel)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "", fmt.Errorf("%s is not committed in %s; only a committed memory can be promoted", rel, dir)
	}
	return data, head, nil
}
