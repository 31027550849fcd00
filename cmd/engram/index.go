package main

import (
	"flag"
	"fmt"

	"github.com/engram-dev/engram/memgraph"
)

func init() {
	register(&command{
		name:    "index",
		usage:   "index DIR [user|character]",
		summary: "print the ranked index of user or character memories",
		help: `Prints the index that the mount shows as user_memory.md (default) or
character_memory.md: one line per active memory of user_memory/ or
character_memory/, most used first, with its path, its description and its
use count (the number of "used, DD.MM.YY" lines in its Access log).

Retired memories (status superseded, retracted or contradicted) are left
out, and so are invalid files; run "engram check DIR" to see why a file is
invalid.

Example:

    engram index ~/memory character`,
		run: func(fl *flag.FlagSet, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				fl.Usage()
				return exitError{2}
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
			_, err = stdout.Write(g.Index(kind))
			return err
		},
	})
}
