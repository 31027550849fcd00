package main

import (
	"context"
	"flag"

	"github.com/mindmount/mindmount/hooks/harness"
)

// hookCommand is "mindmount hook EVENT": what git and agent harnesses call,
// git's pre-commit (cmd_githooks.go) and the harness lifecycle events
// (cmd_harness.go).
var hookCommand = newCommand(command{
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
}, runHook)

// hookOptions are the flags of "mindmount hook" for harness events.
type hookOptions struct {
	repo    string // the memory: a repository or a mount; else $MINDMOUNT_REPO
	harness string // which harness calls: output shape and transcript name
	budget  int    // bytes of context a session-start or prompt hook adds
	k       int    // recall hits a prompt hook adds
}

func (o *hookOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.repo, "repo", "", "the memory (repository or mount); default $MINDMOUNT_REPO")
	fl.StringVar(&o.harness, "harness", harness.ClaudeCode, "the calling harness: claude-code, codex, gemini-cli, opencode, run")
	fl.IntVar(&o.budget, "budget", harness.DefaultBudget, "most `bytes` of context a session-start or prompt hook adds")
	fl.IntVar(&o.k, "k", 3, "memories a prompt hook adds")
}

// runHook runs a git hook (pre-commit) or a harness hook (every other
// event).
func runHook(_ context.Context, o *hookOptions, args []string) error {
	if args[0] == "pre-commit" {
		return runGitHook(args[0], args[1:])
	}
	return runHarnessHook(args[0], *o)
}
