package main

import (
	"flag"
	"fmt"
)

// "engram hook EVENT" is what git and agent harnesses call: git's
// pre-commit (githooks.go) and the harness lifecycle events (harness.go).
func init() {
	register(&command{
		name:    "hook",
		usage:   "hook EVENT",
		summary: "run a git or agent-harness hook (called by git and by agents)",
		help: `Called by git (EVENT pre-commit) and by agent harnesses (EVENT
session-start, prompt, stop, session-end, pre-compact). Installed by
"engram hooks install"; you rarely run it by hand.`,
		run: func(fl *flag.FlagSet, args []string) error {
			if len(args) < 1 {
				return fmt.Errorf("missing EVENT (see engram hook --help)")
			}
			if args[0] == "pre-commit" {
				return runGitHook(args[0], args[1:])
			}
			return runHarnessHook(args[0], args[1:])
		},
	})
}
