package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/mindmount/mindmount/memgraph"
)

// indexCommand is "mindmount index".
var indexCommand = newCommand(command{
	name:    "index",
	usage:   "index DIR [user|character] [--max-tokens N | --all]",
	summary: "print the ranked index of user or character memories",
	help: `Prints the index that the mount shows as user_memory.md (default) or
character_memory.md: one line per active memory of user_memory/ or
character_memory/, most used first, with its path, its description and its
use count (the number of "used, DD.MM.YY" lines in its Access log).

Retired memories (status superseded, retracted or contradicted) are left
out, and so are invalid files; run "mindmount check DIR" to see why a file is
invalid.

The index keeps within a budget, as the mount's does: index_tokens in
DIR/.mindmount/settings (default 2000 tokens, about 8 KB), or --max-tokens.
A cut index ends with a line saying how many memories are not shown and
how to reach them; --all prints every one (the full listing the footer
names, .mindmount/index/user_memory.md in the mount and in watch mode).

Example:

    mindmount index ~/memory character`,
}, runIndex)

// indexOptions are the flags of "mindmount index".
type indexOptions struct {
	maxTokens int
	all       bool
}

func (o *indexOptions) AddFlags(fl *flag.FlagSet) {
	fl.IntVar(&o.maxTokens, "max-tokens", 0, "budget in estimated `tokens` (4 bytes each) instead of index_tokens in .mindmount/settings")
	fl.BoolVar(&o.all, "all", false, "print every memory, whatever the budget")
}

// runIndex prints the ranked index of DIR.
func runIndex(_ context.Context, o *indexOptions, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return errUsage
	}
	kind := memgraph.KindUser
	if len(args) == 2 {
		switch args[1] {
		case "user":
		case "character":
			kind = memgraph.KindCharacter
		default:
			return fmt.Errorf("unknown index %q: want user or character", args[1])
		}
	}
	g, err := scanForOutput(args[0])
	if err != nil {
		return err
	}
	if o.maxTokens < 0 || o.maxTokens > 0 && o.all {
		return fmt.Errorf("give one of --max-tokens N (a positive number) or --all")
	}
	out := g.Index(kind)
	switch {
	case o.all:
		out = g.FullIndex(kind)
	case o.maxTokens > 0:
		out = g.IndexWithin(kind, o.maxTokens*memgraph.BytesPerToken)
	}
	_, err = stdout.Write(out)
	return err
}
