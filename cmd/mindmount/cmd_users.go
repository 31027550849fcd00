package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"text/tabwriter"

	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/httpapi"
)

// usersCommand is "mindmount users" and its subcommands (the token ones in
// cmd_tokens.go).
var usersCommand = &command{
	name:    "users",
	usage:   "users add|list|remove|token ROOT [ID] [--uid N --gid N] [--name NAME]",
	summary: "add, list and remove the users a mindmount serve ROOT serves, and their HTTP tokens",
	help:    usersHelp,
	subs: []*command{
		newCommand(command{
			name:    "add",
			usage:   "users add ROOT ID [--uid N --gid N] [--name NAME]",
			summary: "create ROOT/users/ID (or adopt the mindmount repository there), hand it to uid:gid and register it",
			help: `Creates ROOT/users/ID as mindmount init does (or adopts a mindmount
repository already there), hands it to uid:gid when run as root, and
registers it in ROOT/users.json. ID is lower-case letters, digits, '.', '_'
and '-', starting with a letter or digit, at most 64 characters.

Every user has a uid and a gid of its own: uid or gid 0 (root's) and a
uid or gid another user of ROOT has are refused. Run as root without
--uid, the user gets the lowest uid of --uid-range (default ` + defaultUIDRange + `)
that no registered user, no system account (passwd) and no file at the
top of ROOT has, and a group of the same number.`,
		}, runUsersAdd),
		newCommand(command{
			name:    "list",
			usage:   "users list ROOT",
			summary: "print every user: id, uid:gid, name, repository",
			help:    "Prints every user of ROOT: id, uid:gid, name and repository.",
		}, runUsersList),
		newCommand(command{
			name:    "remove",
			usage:   "users remove ROOT ID",
			summary: "unregister a user, revoke its tokens and move its repository aside (never deleted)",
			help: `Unregisters the user and moves the repository aside to ROOT/removed/ID-TIME;
it is never deleted. Its tokens are revoked and its credentials folder
(ROOT/credentials/ID, the git token) is deleted. A running mindmount serve
commits what is pending first.`,
		}, runUsersRemove),
		tokenCommand,
	},
}

const usersHelp = `Manages the users of a mindmount serve ROOT. Each user is a mindmount
repository at ROOT/users/<id>, registered in ROOT/users.json with the uid
and gid its processes run as.

  mindmount users add ROOT ID [--uid N --gid N] [--name NAME]
      creates ROOT/users/ID (as mindmount init does, or adopts a mindmount
      repository already there), hands it to uid:gid and registers it
  mindmount users list ROOT
      prints every user: id, uid:gid, name, repository
  mindmount users remove ROOT ID
      unregisters the user and moves the repository aside to
      ROOT/removed/ID-TIME; it is never deleted. Its tokens are revoked
      and its credentials folder (ROOT/credentials/ID) deleted.
  mindmount users token ROOT ID
      prints a new HTTP API token for ID (shown this once; only its hash is
      kept, in ROOT/tokens.json); the user's other tokens stay valid
  mindmount users token list ROOT [ID]
      prints every token's ID, user and creation date, never its value
  mindmount users token revoke ROOT ID [TOKEN-ID]
      revokes one of ID's tokens, or all of them (same: --revoke)

A token is bound to the user as registered when it was made: removing a
user and adding one with the same ID leaves the old tokens void. A running
mindmount serve sees a new or revoked token at the next request.

A user ID is lower-case letters, digits, '.', '_' and '-', starting with a
letter or digit, at most 64 characters; it is the directory name as it is,
so two IDs never share a repository. A running mindmount serve picks up an
added or removed user at its next access (SIGHUP: at once).

Example:

    mindmount users add /srv/mindmount alice --uid 1001 --gid 1001 --name Alice
    mindmount users list /srv/mindmount
    mindmount users token /srv/mindmount alice
    mindmount users token revoke /srv/mindmount alice`

// usersAddOptions are the flags of "mindmount users add".
type usersAddOptions struct {
	uid, gid, name, uidRange string
}

func (o *usersAddOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.uid, "uid", "", "the user's numeric `UID` (default: as root, a free uid of --uid-range; otherwise the owner of ROOT)")
	fl.StringVar(&o.gid, "gid", "", "the user's numeric `GID` (default: the user's uid's group, else the owner of ROOT)")
	fl.StringVar(&o.name, "name", "", "the user's display `NAME`, written into user.md")
	fl.StringVar(&o.uidRange, "uid-range", defaultUIDRange, "run as root without --uid: pick the user's uid (and gid) from `FIRST-LAST`")
}

func runUsersAdd(_ context.Context, o *usersAddOptions, args []string) error {
	if len(args) != 2 {
		return usageError{"need ROOT and ID"}
	}
	root, id := args[0], args[1]
	if err := host.ValidID(id); err != nil {
		return err
	}
	if err := os.MkdirAll(root, 0o755); err != nil { // its owner is the default uid
		return err
	}
	uid, gid, err := ownerIDs(root, o.uid, o.gid)
	if err != nil {
		return err
	}
	n := host.NewUser{Entry: host.Entry{ID: id, UID: uid, GID: gid, Name: o.name}}
	if os.Geteuid() == 0 && o.uid == "" {
		// Never root's ids: a free uid of the range, its own group.
		r, err := parseUIDRange(o.uidRange)
		if err != nil {
			return err
		}
		n.Pick = func(users []host.Entry) (uint32, uint32, error) {
			u, err := r.next(host.UIDInUse(root, users))
			g := u
			if o.gid != "" {
				g = gid
			}
			return u, g, err
		}
	}
	e, res, err := host.AddNewUser(root, n)
	if err != nil {
		return err
	}
	dir := host.UserDir(root, id)
	if res.Fresh || len(res.Created) > 0 || res.Upgraded != nil {
		printInit(stdout, dir, o.name, res)
	}
	fmt.Fprintf(stdout, "mindmount: user %s added (%d:%d), repository %s\n", id, e.UID, e.GID, dir)
	return nil
}

// ownerIDs resolves --uid and --gid; either defaults to the owner of root.
func ownerIDs(root, uidS, gidS string) (uint32, uint32, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return 0, 0, err
	}
	uid, gid := host.FileOwner(fi)
	parse := func(flag, s string, def uint32) (uint32, error) {
		if s == "" {
			return def, nil
		}
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("--%s %q is not a number", flag, s)
		}
		return uint32(n), nil
	}
	u, err := parse("uid", uidS, uid)
	if err != nil {
		return 0, 0, err
	}
	if gidS == "" && uidS != "" {
		gid = u // a user's own group is the usual default
	}
	g, err := parse("gid", gidS, gid)
	return u, g, err
}

func runUsersList(_ context.Context, _ *noOptions, args []string) error {
	if len(args) != 1 {
		return usageError{"need ROOT"}
	}
	root := args[0]
	entries, err := host.ReadRegistry(root)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUID:GID\tNAME\tREPOSITORY")
	for _, e := range entries {
		dir := host.UserDir(root, e.ID)
		if !host.IsMindmountRepo(dir) {
			dir += " (missing or not a mindmount repository)"
		}
		fmt.Fprintf(tw, "%s\t%d:%d\t%s\t%s\n", e.ID, e.UID, e.GID, strconv.Quote(e.Name), dir)
	}
	return tw.Flush()
}

func runUsersRemove(_ context.Context, _ *noOptions, args []string) error {
	if len(args) != 2 {
		return usageError{"need ROOT and ID"}
	}
	root, id := args[0], args[1]
	err := host.RemoveUser(root, id)
	if errors.Is(err, host.ErrUnknownUser) {
		return fmt.Errorf("no user %q in %s", id, root)
	}
	if err != nil {
		return err
	}
	// The registry entry is gone, which voids the tokens already (they
	// name it); removing them keeps tokens.json from growing stale.
	if _, err := httpapi.RevokeTokens(root, id, ""); err != nil {
		fmt.Fprintf(stderr, "mindmount: user %s removed, but its tokens were not deleted from %s (they are void anyway): %v\n", id, httpapi.TokensFile, err)
	}
	if running, pid, _ := host.Running(root); running {
		// The daemon commits what is pending, then moves the repository
		// aside; SIGHUP makes it look now rather than within 30 seconds.
		if n, perr := strconv.Atoi(pid); perr == nil && n != os.Getpid() {
			syscall.Kill(n, syscall.SIGHUP)
		}
		fmt.Fprintf(stdout, "mindmount: user %s removed; the running daemon (pid %s) commits what is pending and moves the repository to %s\n", id, pid, filepath.Join(root, host.RemovedDir))
		return nil
	}
	dest, err := host.MoveAside(root, id)
	if err != nil {
		return err
	}
	if dest != "" {
		fmt.Fprintf(stdout, "mindmount: user %s removed; repository moved to %s\n", id, dest)
	} else {
		fmt.Fprintf(stdout, "mindmount: user %s removed\n", id)
	}
	return nil
}
