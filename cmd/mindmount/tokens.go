package main

import (
	"fmt"
	"time"

	"github.com/mindmount/mindmount/cmd/mindmount/host"
	"github.com/mindmount/mindmount/cmd/mindmount/httpapi"
)

func init() {
	usersSubcommands["token"] = usersToken
}

// usersToken is "mindmount users token ROOT ID": it prints a new HTTP API
// token for user ID, replacing the user's earlier one. Only the token's
// SHA-256 is stored (ROOT/tokens.json, mode 0600, outside every
// repository); the token itself is shown this once.
func usersToken(args []string) error {
	fl, _, _, _, err := usersFlagSet("token", args)
	if err != nil {
		return err
	}
	if fl.NArg() != 2 {
		fmt.Fprintln(stderr, "mindmount users token: need ROOT and ID (mindmount users token ROOT ID)")
		return exitError{2}
	}
	root, id := fl.Arg(0), fl.Arg(1)
	if err := host.ValidID(id); err != nil {
		return err
	}
	entries, err := host.ReadRegistry(root)
	if err != nil {
		return err
	}
	known := false
	for _, e := range entries {
		known = known || e.ID == id
	}
	if !known {
		return fmt.Errorf("%w %q under %s: add it first with mindmount users add %s %s", host.ErrUnknownUser, id, root, root, id)
	}
	tok, err := httpapi.NewToken(root, id, time.Now())
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, tok)
	return nil
}
