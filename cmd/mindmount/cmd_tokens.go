package main

import (
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/mindmount/mindmount/cmd/mindmount/internal/host"
	"github.com/mindmount/mindmount/cmd/mindmount/internal/httpapi"
	"github.com/mindmount/mindmount/memgraph"
)

func init() {
	usersSubcommands["token"] = usersToken
	usersFlags = append(usersFlags, func(fl *flag.FlagSet) {
		fl.Bool("revoke", false, "token: revoke the user's tokens (all of them, or the one TOKEN-ID names)")
	})
}

// usersToken is "mindmount users token …":
//
//	users token ROOT ID                       make a token (printed once)
//	users token ROOT ID --revoke [TOKEN-ID]   revoke one or all of ID's tokens
//	users token revoke ROOT ID [TOKEN-ID]     the same
//	users token list ROOT [ID]                token IDs and dates, never values
//
// Only a token's SHA-256 is stored (ROOT/tokens.json, mode 0600, outside
// every repository), with the registry entry it was made for. A running
// daemon sees every change at its next request.
func usersToken(args []string) error {
	fl := flag.NewFlagSet("mindmount users token", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.String("uid", "", "")
	fl.String("gid", "", "")
	fl.String("name", "", "")
	revoke := fl.Bool("revoke", false, "")
	ordered, err := interleave(fl, args)
	if err != nil {
		return err
	}
	if err := fl.Parse(ordered); err != nil {
		return exitError{2}
	}
	pos := fl.Args()
	if len(pos) > 0 && (pos[0] == "list" || pos[0] == "revoke") {
		sub := pos[0]
		pos = pos[1:]
		if sub == "list" {
			return tokenList(pos)
		}
		*revoke = true
	}
	if *revoke {
		return tokenRevoke(pos)
	}
	if len(pos) != 2 {
		fmt.Fprintln(stderr, "mindmount users token: need ROOT and ID (mindmount users token ROOT ID)")
		return exitError{2}
	}
	root, id := pos[0], pos[1]
	if err := host.ValidID(id); err != nil {
		return err
	}
	tok, tid, err := httpapi.NewToken(root, id, time.Now())
	if errors.Is(err, host.ErrUnknownUser) {
		return fmt.Errorf("%w: add it first with mindmount users add %s %s", err, root, id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	fmt.Fprintf(stderr, "mindmount: token %s made for %s; it is shown this once (revoke it with: mindmount users token revoke %s %s %s)\n", tid, id, root, id, tid)
	return nil
}

func tokenRevoke(pos []string) error {
	if len(pos) != 2 && len(pos) != 3 {
		fmt.Fprintln(stderr, "mindmount users token revoke: need ROOT and ID, and optionally TOKEN-ID (without it, every token of ID is revoked)")
		return exitError{2}
	}
	root, id, tid := pos[0], pos[1], ""
	if len(pos) == 3 {
		tid = pos[2]
	}
	if err := host.ValidID(id); err != nil {
		return err
	}
	n, err := httpapi.RevokeTokens(root, id, tid)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "mindmount: %d %s of %s revoked\n", n, memgraph.Plural(n, "token", "tokens"), id)
	return nil
}

func tokenList(pos []string) error {
	if len(pos) != 1 && len(pos) != 2 {
		fmt.Fprintln(stderr, "mindmount users token list: need ROOT, and optionally ID")
		return exitError{2}
	}
	user := ""
	if len(pos) == 2 {
		user = pos[1]
	}
	list, err := httpapi.ListTokens(pos[0], user)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOKEN-ID\tUSER\tCREATED\tSTATE")
	for _, t := range list {
		state := "valid"
		if t.Void {
			state = "void (the user was removed)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.ID, t.User, t.Created.UTC().Format(time.RFC3339), state)
	}
	return tw.Flush()
}
