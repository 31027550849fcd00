package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/host"
)

// teamsCommand is "mindmount teams": the teams of a serve ROOT and their
// members, kept in the root-owned ROOT/teams.conf.
var teamsCommand = &command{
	name:    "teams",
	usage:   "teams add|remove|list|member ROOT [TEAM] [USER --role ROLE]",
	summary: "add, list and remove the teams of a mindmount serve ROOT and their members' roles",
	help:    teamsHelp,
	subs: []*command{
		newCommand(command{
			name:    "add",
			usage:   "teams add ROOT TEAM [--uid N --gid N]",
			summary: "create the team's repository ROOT/teams/TEAM and declare the team",
			help: `Creates ROOT/teams/TEAM as mindmount init does (or adopts a repository
already there) and declares the team in ROOT/teams.conf. Run as root, the
repository is handed to the team's own uid and group (--uid/--gid, default:
a free uid of --uid-range and a group of the same number), mode 0750: its
members' workers read it through that group.`,
		}, runTeamsAdd),
		newCommand(command{
			name:    "remove",
			usage:   "teams remove ROOT TEAM",
			summary: "forget a team and its members; its repository stays where it is",
			help:    "Forgets the team and every membership. The repository ROOT/teams/TEAM is never deleted.",
		}, runTeamsRemove),
		newCommand(command{
			name:    "list",
			usage:   "teams list ROOT",
			summary: "print every team: name, uid:gid, members and roles",
			help:    "Prints every team of ROOT with its uid:gid and its members as user=role.",
		}, runTeamsList),
		newCommand(command{
			name:    "member",
			usage:   "teams member ROOT TEAM USER [--role read|propose|write|maintain] [--remove]",
			summary: "give USER a role in TEAM, or take USER out of it",
			help: `Gives USER the role in TEAM (a member already there changes role), or with
--remove takes USER out. A running mindmount serve applies it at once
(SIGHUP).`,
		}, runTeamsMember),
	},
}

const teamsHelp = `Manages the teams of a mindmount serve ROOT. A team's memory is a
repository of its own (ROOT/teams/<team>), of the same format as a user's;
each member's mount shows it at shared/<team>/.

Membership lives in ROOT/teams.conf, written by these commands, owned by
root and writable by nobody else: a file another user owns or may write is
refused as a whole, so no one writing memories can grant themselves a role.

Roles:
  read      sees the team; every change is refused (EROFS)
  propose   a change becomes a proposal a maintainer approves
  write     a change is committed, the member its author
  maintain  write, and approves or rejects proposals

  mindmount teams add ROOT TEAM [--uid N --gid N]
  mindmount teams list ROOT
  mindmount teams member ROOT TEAM USER --role write
  mindmount teams member ROOT TEAM USER --remove
  mindmount teams remove ROOT TEAM

Example:

    mindmount teams add /srv/mindmount eng
    mindmount teams member /srv/mindmount eng alice --role maintain
    mindmount teams member /srv/mindmount eng bob --role read
    mindmount teams list /srv/mindmount`

// teamsAddOptions are the flags of "mindmount teams add".
type teamsAddOptions struct{ uid, gid, uidRange string }

func (o *teamsAddOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.uid, "uid", "", "the team's numeric `UID` (as root, default: a free uid of --uid-range)")
	fl.StringVar(&o.gid, "gid", "", "the team's group `GID` (default: the uid's number)")
	fl.StringVar(&o.uidRange, "uid-range", defaultUIDRange, "pick the team's uid from `FIRST-LAST`")
}

func runTeamsAdd(_ context.Context, o *teamsAddOptions, args []string) error {
	if len(args) != 2 {
		return usageError{"need ROOT and TEAM"}
	}
	root, name := args[0], args[1]
	if err := team.ValidName(name); err != nil {
		return err
	}
	return editTeams(root, func(c *team.Config) error {
		uid, gid, err := teamIDs(root, c, o)
		if err != nil {
			return err
		}
		if err := c.AddTeam(name, uid, gid); err != nil {
			return err
		}
		// ROOT/teams may be crossed by every worker but listed by
		// nobody: a member's worker reaches its team by name; each
		// team's own folder (0750, GiveToTeam) lets only its group in.
		parent := filepath.Join(root, team.Dir)
		if err := os.MkdirAll(parent, 0o711); err != nil {
			return err
		}
		if err := os.Chmod(parent, 0o711); err != nil {
			return err
		}
		dir := filepath.Join(parent, name)
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return err
		}
		if !host.IsMindmountRepo(dir) {
			if _, err := host.InitRepo(dir, host.InitOptions{}); err != nil {
				return err
			}
		}
		if uid != 0 {
			if err := host.GiveToTeam(dir, uint32(uid), uint32(gid)); err != nil {
				return err
			}
		}
		fmt.Fprintf(stdout, "mindmount: team %s added (%d:%d), repository %s\n", name, uid, gid, dir)
		return nil
	})
}

// teamIDs picks the uid and gid of a new team: the flags, or as root a
// uid of the range that no user, team or system account has (0, 0 when
// not root: the repository stays its creator's).
func teamIDs(root string, c *team.Config, o *teamsAddOptions) (int, int, error) {
	num := func(flag, s string) (int, error) {
		n, err := strconv.ParseUint(s, 10, 31)
		if err != nil || n == 0 {
			return 0, fmt.Errorf("--%s %q: want a number above 0", flag, s)
		}
		return int(n), nil
	}
	uid, gid := 0, 0
	var err error
	switch {
	case o.uid != "":
		if uid, err = num("uid", o.uid); err != nil {
			return 0, 0, err
		}
	case os.Geteuid() == 0:
		r, err := parseUIDRange(o.uidRange)
		if err != nil {
			return 0, 0, err
		}
		users, err := host.ReadRegistry(root)
		if err != nil {
			return 0, 0, err
		}
		for _, t := range c.Teams {
			users = append(users, host.Entry{UID: uint32(t.UID), GID: uint32(t.GID)})
		}
		u, err := r.next(host.UIDInUse(root, users))
		if err != nil {
			return 0, 0, err
		}
		uid = int(u)
	default:
		return 0, 0, nil
	}
	gid = uid
	if o.gid != "" {
		if gid, err = num("gid", o.gid); err != nil {
			return 0, 0, err
		}
	}
	return uid, gid, nil
}

func runTeamsRemove(_ context.Context, _ *noOptions, args []string) error {
	if len(args) != 2 {
		return usageError{"need ROOT and TEAM"}
	}
	root, name := args[0], args[1]
	return editTeams(root, func(c *team.Config) error {
		if err := c.RemoveTeam(name); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "mindmount: team %s removed; its repository stays at %s\n", name, filepath.Join(root, team.Dir, name))
		return nil
	})
}

func runTeamsList(_ context.Context, _ *noOptions, args []string) error {
	if len(args) != 1 {
		return usageError{"need ROOT"}
	}
	c, err := team.Load(args[0])
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEAM\tUID:GID\tMEMBERS")
	for _, n := range c.Names() {
		t := c.Teams[n]
		var ms []string
		for u, r := range t.Members {
			ms = append(ms, u+"="+string(r))
		}
		sort.Strings(ms)
		fmt.Fprintf(tw, "%s\t%d:%d\t%s\n", n, t.UID, t.GID, strings.Join(ms, " "))
	}
	return tw.Flush()
}

// teamsMemberOptions are the flags of "mindmount teams member".
type teamsMemberOptions struct {
	role   string
	remove bool
}

func (o *teamsMemberOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.role, "role", "", "the member's `ROLE`: read, propose, write or maintain")
	fl.BoolVar(&o.remove, "remove", false, "take the user out of the team")
}

func runTeamsMember(_ context.Context, o *teamsMemberOptions, args []string) error {
	if len(args) != 3 {
		return usageError{"need ROOT, TEAM and USER"}
	}
	root, name, user := args[0], args[1], args[2]
	if o.remove == (o.role != "") {
		return usageError{"give --role ROLE or --remove"}
	}
	return editTeams(root, func(c *team.Config) error {
		if o.remove {
			if err := c.RemoveMember(name, user); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "mindmount: %s is no longer a member of %s\n", user, name)
			return nil
		}
		role, err := team.ParseRole(o.role)
		if err != nil {
			return err
		}
		if err := c.SetMember(name, user, role); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "mindmount: %s is a member of %s (%s)\n", user, name, role)
		return nil
	})
}

// editTeams changes ROOT's teams configuration under a lock, writes it back
// root-owned and not writable by others, and tells a running serve
// (SIGHUP).
func editTeams(root string, edit func(*team.Config) error) error {
	lock, err := os.OpenFile(filepath.Join(root, team.ConfigFile+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	c, err := team.Load(root)
	if err != nil {
		return err
	}
	if err := edit(&c); err != nil {
		if errors.Is(err, team.ErrUnknownTeam) {
			return fmt.Errorf("%w (mindmount teams list %s)", err, root)
		}
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(root, team.ConfigFile), c.Format(), 0o644); err != nil {
		return err
	}
	if running, pid, _ := host.Running(root); running {
		if n, err := strconv.Atoi(pid); err == nil && n != os.Getpid() {
			syscall.Kill(n, syscall.SIGHUP)
		}
	}
	return nil
}
