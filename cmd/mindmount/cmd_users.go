package main

import (
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

	"github.com/mindmount/mindmount/cmd/mindmount/internal/host"
	"github.com/mindmount/mindmount/cmd/mindmount/internal/httpapi"
)

// usersSubcommands dispatches "mindmount users SUB ...": each gets the
// arguments after SUB, with the flags that were set first as --name=value
// (parse them with its own flag.FlagSet). A subcommand's file adds itself
// from init(), and declares its flags in usersFlags so that the command
// line parser accepts them.
var usersSubcommands = map[string]func(args []string) error{}

// usersFlags declare the flags of every users subcommand on the users
// command (see usersSubcommands).
var usersFlags []func(fl *flag.FlagSet)

func init() {
	usersSubcommands["add"] = usersAdd
	usersSubcommands["list"] = usersList
	usersSubcommands["remove"] = usersRemove
	usersFlags = append(usersFlags, func(fl *flag.FlagSet) {
		fl.String("uid", "", "add: the user's numeric `UID` (default: the owner of ROOT)")
		fl.String("gid", "", "add: the user's numeric `GID` (default: the user's uid's group, else the owner of ROOT)")
		fl.String("name", "", "add: the user's display `NAME`, written into user.md")
	})
	register(&command{
		name:    "users",
		usage:   "users add|list|remove|token ROOT [ID] [--uid N --gid N] [--name NAME]",
		summary: "add, list and remove the users a mindmount serve ROOT serves, and their HTTP tokens",
		help: `Manages the users of a mindmount serve ROOT. Each user is a mindmount
repository at ROOT/users/<id>, registered in ROOT/users.json with the uid
and gid its processes run as.

  mindmount users add ROOT ID [--uid N --gid N] [--name NAME]
      creates ROOT/users/ID (as mindmount init does, or adopts a mindmount
      repository already there), hands it to uid:gid and registers it
  mindmount users list ROOT
      prints every user: id, uid:gid, name, repository
  mindmount users remove ROOT ID
      unregisters the user and moves the repository aside to
      ROOT/removed/ID-TIME; it is never deleted. Its tokens are revoked.
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
    mindmount users token revoke /srv/mindmount alice`,
		flags: func(fl *flag.FlagSet) {
			for _, f := range usersFlags {
				f(fl)
			}
		},
		run: func(fl *flag.FlagSet, args []string) error {
			if len(args) == 0 {
				fmt.Fprintln(stderr, "mindmount users: missing the subcommand: add, list, remove or token (see mindmount users --help)")
				return exitError{2}
			}
			sub, ok := usersSubcommands[args[0]]
			if !ok {
				names := make([]string, 0, len(usersSubcommands))
				for n := range usersSubcommands {
					names = append(names, n)
				}
				sort.Strings(names)
				fmt.Fprintf(stderr, "mindmount users: unknown subcommand %q (one of: %s)\n", args[0], strings.Join(names, ", "))
				return exitError{2}
			}
			var set []string
			fl.Visit(func(f *flag.Flag) { set = append(set, "--"+f.Name+"="+f.Value.String()) })
			return sub(append(set, args[1:]...))
		},
	})
}

// usersFlagSet parses a users subcommand's arguments.
func usersFlagSet(name string, args []string) (fl *flag.FlagSet, uid, gid, display *string, err error) {
	fl = flag.NewFlagSet("mindmount users "+name, flag.ContinueOnError)
	fl.SetOutput(stderr)
	uid = fl.String("uid", "", "")
	gid = fl.String("gid", "", "")
	display = fl.String("name", "", "")
	ordered, err := interleave(fl, args)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if err := fl.Parse(ordered); err != nil {
		return nil, nil, nil, nil, exitError{2}
	}
	return fl, uid, gid, display, nil
}

func usersAdd(args []string) error {
	fl, uidS, gidS, display, err := usersFlagSet("add", args)
	if err != nil {
		return err
	}
	if fl.NArg() != 2 {
		fmt.Fprintln(stderr, "mindmount users add: need ROOT and ID (mindmount users add ROOT ID [--uid N --gid N] [--name NAME])")
		return exitError{2}
	}
	root, id := fl.Arg(0), fl.Arg(1)
	if err := host.ValidID(id); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, host.UsersDir), 0o755); err != nil {
		return err
	}
	uid, gid, err := ownerIDs(root, *uidS, *gidS)
	if err != nil {
		return err
	}
	dir := host.UserDir(root, id)
	if !host.IsMindmountRepo(dir) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := initRepo(dir, *display, true); err != nil {
			return err
		}
	}
	if os.Geteuid() == 0 {
		// The repository is the user's from the start: the user's worker
		// (and the user's own git) work in it as the user.
		if err := host.GiveToUser(dir, uid, gid); err != nil {
			return err
		}
	}
	if err := host.AddUser(root, host.Entry{ID: id, UID: uid, GID: gid, Name: *display}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "mindmount: user %s added (%d:%d), repository %s\n", id, uid, gid, dir)
	return nil
}

// ownerIDs resolves --uid and --gid; either defaults to the owner of root.
func ownerIDs(root, uidS, gidS string) (uint32, uint32, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return 0, 0, err
	}
	uid, gid := statOwner(fi)
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

func usersList(args []string) error {
	fl, _, _, _, err := usersFlagSet("list", args)
	if err != nil {
		return err
	}
	if fl.NArg() != 1 {
		fmt.Fprintln(stderr, "mindmount users list: need ROOT")
		return exitError{2}
	}
	root := fl.Arg(0)
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

func usersRemove(args []string) error {
	fl, _, _, _, err := usersFlagSet("remove", args)
	if err != nil {
		return err
	}
	if fl.NArg() != 2 {
		fmt.Fprintln(stderr, "mindmount users remove: need ROOT and ID")
		return exitError{2}
	}
	root, id := fl.Arg(0), fl.Arg(1)
	err = host.RemoveUser(root, id)
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

// statOwner is the uid and gid of a file.
func statOwner(fi os.FileInfo) (uint32, uint32) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid, st.Gid
	}
	return uint32(os.Getuid()), uint32(os.Getgid())
}
