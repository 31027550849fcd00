package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/proposal"
)

// joinRole is the role "team join" records: --role, else read with
// --read-only, else write.
func joinRole(o *teamJoinOptions) (team.Role, error) {
	if o.role == "" {
		if o.readOnly {
			return team.Read, nil
		}
		return team.Write, nil
	}
	r, err := team.ParseRole(o.role)
	if err != nil {
		return "", usageError{err.Error()}
	}
	if o.readOnly && r != team.Read {
		return "", usageError{"--read-only and --role " + o.role + " disagree"}
	}
	return r, nil
}

var teamProposeCommand = newCommand(command{
	name:    "propose",
	usage:   "team propose REPO TEAM [-m MESSAGE]",
	summary: "commit the files staged for TEAM as a proposal branch for a maintainer",
	help: `Commits every file staged in REPO/.git/mindmount/teams/TEAM.proposals/
(laid out as in the team's tree, e.g. user_memory/x.md) as one commit on a
new branch mindmount/proposal/<you>/<n> of the team's clone, started from
its HEAD; the team's HEAD and work tree do not change, so no other member
sees it until a maintainer approves ("mindmount review approve --team").
The team's gate judges the files (names, validation, read_only, secrets,
sizes); once committed the staging folder is emptied. Push the branch with
git: sync pushes the team's own branch only.`,
}, runTeamPropose)

// proposeOptions are the flags of "mindmount team propose".
type proposeOptions struct {
	message string
}

func (o *proposeOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.message, "m", "", "the proposal's `MESSAGE` (one line)")
}

// errNothingStaged: team propose found no file to propose.
var errNothingStaged = errors.New("nothing is staged")

func runTeamPropose(ctx context.Context, o *proposeOptions, args []string) error {
	if len(args) != 2 {
		return usageError{"need REPO and TEAM"}
	}
	a, r, err := joinedTeam(args[0], args[1])
	if err != nil {
		return err
	}
	if !a.Role.Mutates() {
		return fmt.Errorf("%w: your role in team %s is %s", errTeamRole, a.Name, a.Role)
	}
	gitDir, err := personalGitDir(args[0])
	if err != nil {
		return err
	}
	stage := team.ProposalsDir(gitDir, a.Name)
	changes, err := stagedChanges(stage)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		return fmt.Errorf("%w in %s", errNothingStaged, stage)
	}
	msg := o.message
	if msg == "" {
		msg = fmt.Sprintf("team: propose %d file(s)", len(changes))
	}
	member := memberName()
	p, err := proposal.Propose(ctx, tracker.Alone{Repo: r}, r, member, changes, msg, gitrepo.Writer(member))
	if err != nil {
		return err
	}
	if err := os.RemoveAll(stage); err != nil {
		return fmt.Errorf("proposed as %s, but %s stays: %w", p.Branch, stage, err)
	}
	fmt.Fprintf(stdout, "mindmount: proposed %s (tip %s) to team %s\n", p.Branch, gitrepo.ShortHash(p.Tip), a.Name)
	return nil
}

// stagedChanges reads every regular file under stage as a change at its
// slash-separated path; a symbolic link or other special file is refused
// (never followed out of the folder). A missing folder stages nothing.
func stagedChanges(stage string) ([]gitrepo.Change, error) {
	var out []gitrepo.Change
	err := filepath.WalkDir(stage, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == stage {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file; only files are proposed", p)
		}
		rel, err := filepath.Rel(stage, p)
		if err != nil {
			return err
		}
		b, err := readNoFollow(p)
		if err != nil {
			return err
		}
		out = append(out, gitrepo.Change{Path: filepath.ToSlash(rel), Data: b})
		return nil
	})
	return out, err
}

// readNoFollow reads the file p, refusing a symbolic link put there after
// the walk saw a file.
func readNoFollow(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
