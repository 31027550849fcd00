package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/mount"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/host"
)

// teamCommand is "mindmount team": a person's laptop joins a team's memory
// (a clone of the team's repository beside the personal one).
var teamCommand = &command{
	name:    "team",
	usage:   "team join|propose|leave|list REPO ...",
	summary: "join or leave a team's memory on this machine (mounted at shared/<team>/)",
	help: `Without mindmount serve, a team's memory is a git repository on a git host.
"team join" clones it under the personal repository's git directory
(REPO/.git/mindmount/teams/<team>/: never committed to the personal
repository, never writable through the mount's .git), and "mindmount mount
REPO MNT" shows it at MNT/shared/<team>/. A change there is committed in
the team's clone, authored by you; push it with git (the git host decides
who may push). --read-only (--role read) refuses every change locally
(EROFS). --role propose keeps shared/<team>/ read-only too: you stage
files in REPO/.git/mindmount/teams/<team>.proposals/ and "team propose"
commits them on a branch mindmount/proposal/<you>/<n> for a maintainer
("mindmount review list --team TEAM REPO").

  mindmount team join REPO URL [--name TEAM] [--role read|propose|write|maintain] [--read-only]
  mindmount team propose REPO TEAM [-m MESSAGE]
  mindmount team leave REPO TEAM
  mindmount team list REPO`,
	subs: []*command{
		newCommand(command{
			name:    "join",
			usage:   "team join REPO URL [--name TEAM] [--role ROLE] [--read-only]",
			summary: "clone the team's repository URL beside REPO and attach it at shared/TEAM/",
			help:    "Clones URL to REPO/.git/mindmount/teams/TEAM (TEAM: --name, else the URL's last part without .git).",
		}, runTeamJoin),
		teamProposeCommand,
		newCommand(command{
			name:    "leave",
			usage:   "team leave REPO TEAM",
			summary: "detach the team: its clone is moved aside, never deleted",
			help:    "Detaches TEAM from REPO: its clone is moved to REPO/.git/mindmount/teams/.left-TEAM-<pid>, never deleted.",
		}, runTeamLeave),
		newCommand(command{
			name:    "list",
			usage:   "team list REPO",
			summary: "print the teams attached to REPO, their role and clone",
			help:    "Prints every team attached to REPO: name, role, clone.",
		}, runTeamList),
	},
}

// teamJoinOptions are the flags of "mindmount team join".
type teamJoinOptions struct {
	name     string
	readOnly bool
	role     string
}

func (o *teamJoinOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.name, "name", "", "the team's `NAME` (default: the URL's last part)")
	fl.BoolVar(&o.readOnly, "read-only", false, "refuse every change to the team locally (EROFS); the same as --role read")
	fl.StringVar(&o.role, "role", "", "your `ROLE`: read, propose, write or maintain (default write)")
}

func runTeamJoin(_ context.Context, o *teamJoinOptions, args []string) error {
	if len(args) != 2 {
		return usageError{"need REPO and URL"}
	}
	dir, url := args[0], args[1]
	gitDir, err := personalGitDir(dir)
	if err != nil {
		return err
	}
	name := o.name
	if name == "" {
		name = filepath.Base(url)
		if ext := filepath.Ext(name); ext == ".git" {
			name = name[:len(name)-len(ext)]
		}
	}
	if err := team.ValidName(name); err != nil {
		return err
	}
	dest := filepath.Join(team.LaptopDir(gitDir), name)
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("team %s is joined already (%s)", name, dest)
	}
	if err := os.MkdirAll(team.LaptopDir(gitDir), 0o700); err != nil {
		return err
	}
	role, err := joinRole(o)
	if err != nil {
		return err
	}
	if err := os.WriteFile(team.RoleFile(gitDir, name), []byte(string(role)+"\n"), 0o600); err != nil {
		return err
	}
	// "--" ends the options: a URL starting with "-" is not an option of git.
	cmd := exec.Command("git", "clone", "--quiet", "--", url, dest)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		os.RemoveAll(dest)
		return fmt.Errorf("git clone %s: %w", url, err)
	}
	if !host.IsMindmountRepo(dest) {
		os.RemoveAll(dest)
		return fmt.Errorf("%s is not a mindmount repository (a team's memory is made with mindmount init and pushed)", url)
	}
	fmt.Fprintf(stdout, "mindmount: joined team %s (%s); mount %s to see it at shared/%s/\n", name, role, dir, name)
	return nil
}

func runTeamLeave(_ context.Context, _ *noOptions, args []string) error {
	if len(args) != 2 {
		return usageError{"need REPO and TEAM"}
	}
	gitDir, err := personalGitDir(args[0])
	if err != nil {
		return err
	}
	name := args[1]
	if err := team.ValidName(name); err != nil {
		return err
	}
	clone := filepath.Join(team.LaptopDir(gitDir), name)
	if _, err := os.Lstat(clone); err != nil {
		return fmt.Errorf("%w: %s", team.ErrNotMember, name)
	}
	aside := filepath.Join(team.LaptopDir(gitDir), fmt.Sprintf(".left-%s-%d", name, os.Getpid()))
	if err := os.Rename(clone, aside); err != nil {
		return err
	}
	os.Remove(team.RoleFile(gitDir, name))
	fmt.Fprintf(stdout, "mindmount: left team %s; its clone is at %s\n", name, aside)
	return nil
}

func runTeamList(_ context.Context, _ *noOptions, args []string) error {
	if len(args) != 1 {
		return usageError{"need REPO"}
	}
	gitDir, err := personalGitDir(args[0])
	if err != nil {
		return err
	}
	as, err := team.Attached(gitDir)
	if err != nil {
		return err
	}
	for _, a := range as {
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", a.Name, a.Role, a.Dir)
	}
	return nil
}

// personalGitDir is the git directory of the mindmount repository dir.
func personalGitDir(dir string) (string, error) {
	if err := requireMindmountRepo(dir); err != nil {
		return "", err
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		return "", err
	}
	return r.GitDir(), nil
}

// memberName is who commits to a team from this machine: the login name.
func memberName() string {
	if u, err := user.Current(); err == nil && team.ValidName(u.Username) == nil {
		return u.Username
	}
	return "member"
}

// openTeams starts a runtime (graph and tracker: the clone's one writer)
// for every team attached to dir, committing as this machine's member, and
// returns them for the mount with a function that stops them all.
func openTeams(ctx context.Context, dir string, base host.RuntimeConfig, log *slog.Logger) ([]mount.Team, func(), error) {
	gitDir, err := personalGitDir(dir)
	if err != nil {
		return nil, func() {}, err
	}
	as, err := team.Attached(gitDir)
	if err != nil || len(as) == 0 {
		return nil, func() {}, err
	}
	var rts []*host.Runtime
	stop := func() {
		for _, rt := range rts {
			if err := closeRuntime(rt); err != nil {
				log.Warn("team: stop", "dir", rt.Dir, "err", err)
			}
		}
	}
	var out []mount.Team
	member := memberName()
	for _, a := range as {
		cfg := host.RuntimeConfig{User: member, Author: member, Debounce: base.Debounce, MaxWait: base.MaxWait, Rescan: base.Rescan, Logger: log.With("team", a.Name),
			// The daemon's sync (cmd_sync.go): the clone's origin is the team's
			// remote; fetch, memory merge, push, never a force push.
			Services: base.Services}
		rt, err := host.OpenRuntime(a.Dir, cfg)
		if err == nil {
			err = rt.Start(ctx)
		}
		if err != nil {
			stop()
			return nil, func() {}, fmt.Errorf("team %s: %w", a.Name, err)
		}
		rts = append(rts, rt)
		out = append(out, mount.Team{Name: a.Name, Role: a.Role, Tracker: rt.Tracker, Listeners: rt.Listeners})
	}
	return out, stop, nil
}
