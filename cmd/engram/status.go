package main

import (
	"context"
	"flag"
	"log/slog"

	"github.com/engram-dev/engram/memgraph/tracker"
)

func init() {
	register(&command{
		name:    "status",
		usage:   "status REPO",
		summary: "show invalid files, uncommitted changes and the last commit",
		help: `Prints the report that a running "engram mount" or "engram watch" serves as
.engram/status, without needing one: the memory files that are invalid and
why (path:line: message), the changes in the working tree that are not
committed yet (a running daemon commits them after its debounce; otherwise
the next mount or watch commits them at start), and the last commit.

Example:

    engram status ~/memory`,
		run: func(fl *flag.FlagSet, args []string) error {
			if len(args) != 1 {
				fl.Usage()
				return exitError{2}
			}
			r, g, err := openEngramRepo(args[0])
			if err != nil {
				return err
			}
			// The report says everything; log lines would repeat it.
			tr := tracker.New(g, r, tracker.Config{Logger: slog.New(slog.DiscardHandler)})
			if err := tr.Inspect(context.Background()); err != nil {
				return err
			}
			_, err = stdout.Write(tr.Status())
			return err
		},
	})
}
