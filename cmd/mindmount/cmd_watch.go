package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/serve/host"
)

// watchCommand is "mindmount watch".
var watchCommand = newCommand(command{
	name:    "watch",
	usage:   "watch REPO [--debounce 1s] [--rescan 30s]",
	summary: "commit every change to a memory repository, without FUSE",
	help: `Watches the mindmount repository REPO and turns every change into a git commit,
the same way "mindmount mount" does, on machines without FUSE. Edit the files
in REPO directly (an editor, an agent's shell, a sync tool).

A burst of changes is committed once the writes pause for --debounce (never
later than --max-wait after its first change), as one commit whose message
lists what was added, updated, renamed and removed. Memory files are
validated first: an invalid file stays on disk as written, is not committed,
is reported in .mindmount/status and the log, and is committed as soon as it is
fixed. Editor and tool temp files (vim swap files, "4913", "~" backups,
sed -i temporaries, ".#" locks, *.tmp) and anything .gitignore ignores are
never committed. A read_only file that was changed is reported, not
committed.

The synthesized files user_memory.md, character_memory.md, CONTEXT.md,
.mindmount/status and the full indexes .mindmount/index/user_memory.md and
.mindmount/index/character_memory.md (the listing a cut index's footer points
to) are written as real files in REPO after every change; the template's
.gitignore keeps them out of git. git pull, git revert or git commit run
in REPO are picked up.

On start, anything valid left uncommitted is committed first ("mindmount:
recover N uncommitted changes"). The line "mindmount: watching REPO" on
standard output says the watch is live. SIGINT or SIGTERM commits what is
pending and exits 0. A full rescan every --rescan catches changes the
kernel's file notifications lost (0 turns it off).

Transcripts dropped into transcripts/ are consolidated into memories when
they have been quiet for --idle or --every new user messages arrived, or
when something is written to .mindmount/consolidate (model from MINDMOUNT_LLM,
MINDMOUNT_MODEL, OLLAMA_HOST, OPENAI_BASE_URL, OPENAI_API_KEY; see "mindmount help
consolidate"). Without a reachable model, watching works as usual and
.mindmount/status says consolidation is waiting.

Example:

    mindmount init ~/memory
    mindmount watch ~/memory --debounce 500ms`,
}, runWatch)

// runWatch serves a repository in watch mode.
func runWatch(_ context.Context, o *daemonFlags, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	dir := args[0]
	return serveWatch(dir, o.runtimeConfig(true, slog.Default()))
}

// runWatch watches the repository dir until SIGINT or SIGTERM, then commits
// what is pending.
func serveWatch(dir string, cfg host.RuntimeConfig) error {
	err := runDaemon(dir, cfg, func(context.Context, *host.Runtime) (<-chan error, func(bool) error, error) {
		fmt.Fprintf(stdout, "mindmount: watching %s\n", dir)
		return nil, nil, nil
	})
	if err == nil {
		cfg.Logger.Info("stopped; pending changes committed", "repo", dir)
	}
	return err
}

// openMindmountRepo opens dir as a mindmount repository (see host.OpenRepo),
// with the CLI's error for a missing directory.
func openMindmountRepo(dir string) (*gitrepo.Repo, *memgraph.Graph, error) {
	if err := requireDir(dir); err != nil {
		return nil, nil, err
	}
	return host.OpenRepo(dir)
}
