package main

import (
	"flag"
	"fmt"

	"github.com/mindmount/mindmount/hooks/harness"
)

// "mindmount hook EVENT" is what git and agent harnesses call: git's
// pre-commit (cmd_githooks.go) and the harness lifecycle events (cmd_harness.go).
func init() {
	var opts hookOptions
	register(&command{
		name:    "hook",
		usage:   "hook EVENT [--harness NAME] [--repo DIR]",
		summary: "run a git or agent-harness hook (called by git and by agents)",
		help: `Called by git (EVENT pre-commit) and by agent harnesses (EVENT
session-start, prompt, stop, session-end, pre-compact). Installed by
"mindmount hooks install"; you rarely run it by hand.

A harness hook reads the harness's JSON payload (session_id,
transcript_path, cwd, hook_event_name) on stdin and works on the memory
given by --repo or $MINDMOUNT_REPO (a repository or a mount of one):

  session-start  prints the compiled context (within --budget bytes) and
                 two lines saying where the memory is and how to add to it,
                 as the harness's additionalContext JSON
  prompt         prints the -k memories that best match the payload's
                 prompt (not installed by default; add it by hand)
  stop, session-end, pre-compact
                 append the new turns of transcript_path to
                 transcripts/<harness>-<session>.jsonl of the memory, for
                 consolidation; tool calls and results are left out

A harness hook never fails the agent: a problem is one line on stderr and
exit status 0.`,
		flags: func(fl *flag.FlagSet) {
			fl.StringVar(&opts.repo, "repo", "", "the memory (repository or mount); default $MINDMOUNT_REPO")
			fl.StringVar(&opts.harness, "harness", harness.ClaudeCode, "the calling harness: claude-code, codex, gemini-cli, opencode, run")
			fl.IntVar(&opts.budget, "budget", harness.DefaultBudget, "most `bytes` of context a session-start or prompt hook adds")
			fl.IntVar(&opts.k, "k", 3, "memories a prompt hook adds")
		},
		run: func(fl *flag.FlagSet, args []string) error {
			if len(args) < 1 {
				return fmt.Errorf("missing EVENT (see mindmount hook --help)")
			}
			if args[0] == "pre-commit" {
				return runGitHook(args[0], args[1:])
			}
			return runHarnessHook(args[0], opts)
		},
	})
}
