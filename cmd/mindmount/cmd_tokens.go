package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/httpapi"
)

// tokenCommand is "mindmount users token" and its subcommands.
var tokenCommand = newCommand(command{
	name:    "token",
	usage:   "users token ROOT ID [--scope read,write,review] [--revoke [TOKEN-ID]]",
	summary: "print a new HTTP API token for ID (shown once; only its hash is kept)",
	help: `Prints a new HTTP API token for ID. It is shown this once: only its SHA-256
is kept, in ROOT/tokens.json (mode 0600, outside every repository), with
the registry entry it was made for. The user's other tokens stay valid.

--scope says what the token may do, a comma-separated list of:

    read    see memories, recall, the review queue, the web page
    write   change memories, chat, consolidate, sync
    review  approve or reject consolidation dreams (brings read along)

The default, read,write, is what an agent needs (its MCP client, the chat
API); it cannot approve the agent's own dreams. Give the person who
reviews a token with review (--scope review), or let them use the admin
key. A request beyond a token's scope is answered 403 with the scope it
needs. Tokens made before scopes existed are read,write.

--revoke revokes one of ID's tokens (TOKEN-ID) or all of them, as
"users token revoke" does. A running daemon sees every change at its next
request.

Examples:

    mindmount users token /srv/mindmount alice                 # for alice's agent
    mindmount users token /srv/mindmount alice --scope review  # for alice, reviewing`,
	subs: []*command{
		newCommand(command{
			name:    "list",
			usage:   "users token list ROOT [ID]",
			summary: "print every token's ID, user and creation date, never its value",
			help:    "Prints every token's ID, user, scope, creation date and state (void once its user was removed), never its value.",
		}, func(_ context.Context, _ *noOptions, args []string) error { return tokenList(args) }),
		newCommand(command{
			name:    "revoke",
			usage:   "users token revoke ROOT ID [TOKEN-ID]",
			summary: "revoke one of ID's tokens, or all of them",
			help:    "Revokes the token TOKEN-ID of ID, or every token of ID without it.",
		}, func(_ context.Context, _ *noOptions, args []string) error { return tokenRevoke(args) }),
	},
}, runUsersToken)

// tokenOptions are the flags of "mindmount users token".
type tokenOptions struct {
	revoke bool
	scope  string
}

func (o *tokenOptions) AddFlags(fl *flag.FlagSet) {
	fl.BoolVar(&o.revoke, "revoke", false, "revoke the user's tokens (all of them, or the one TOKEN-ID names)")
	fl.StringVar(&o.scope, "scope", httpapi.DefaultScope.String(), "what the new token may do: `SCOPES`, comma-separated, of read, write and review")
}

// runUsersToken makes a token for ID (or revokes, with --revoke).
func runUsersToken(_ context.Context, o *tokenOptions, pos []string) error {
	if o.revoke {
		return tokenRevoke(pos)
	}
	if len(pos) != 2 {
		return usageError{"need ROOT and ID"}
	}
	root, id := pos[0], pos[1]
	if err := host.ValidID(id); err != nil {
		return err
	}
	scope, err := httpapi.ParseScope(o.scope)
	if err != nil {
		return usageError{"--scope: " + err.Error()}
	}
	tok, tid, err := httpapi.NewScopedToken(root, id, scope, time.Now())
	if errors.Is(err, host.ErrUnknownUser) {
		return fmt.Errorf("%w: add it first with mindmount users add %s %s", err, root, id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	fmt.Fprintf(stderr, "mindmount: token %s made for %s, scope %s; it is shown this once (revoke it with: mindmount users token revoke %s %s %s)\n", tid, id, scope, root, id, tid)
	return nil
}

func tokenRevoke(pos []string) error {
	if len(pos) != 2 && len(pos) != 3 {
		return usageError{"need ROOT and ID, and optionally TOKEN-ID (without it, every token of ID is revoked)"}
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
		return usageError{"need ROOT, and optionally ID"}
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
	fmt.Fprintln(tw, "TOKEN-ID\tUSER\tSCOPE\tCREATED\tSTATE")
	for _, t := range list {
		state := "valid"
		if t.Void {
			state = "void (the user was removed)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.User, t.Scope, t.Created.UTC().Format(time.RFC3339), state)
	}
	return tw.Flush()
}
