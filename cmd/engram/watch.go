package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/engram-dev/engram/memgraph"
	"github.com/engram-dev/engram/memgraph/gitrepo"
)

func init() {
	var (
		daemon daemonFlags
	)
	register(&command{
		name:    "watch",
		usage:   "watch REPO [--debounce 1s] [--rescan 30s]",
		summary: "commit every change to a memory repository, without FUSE",
		help: `Watches the engram repository REPO and turns every change into a git commit,
the same way "engram mount" does, on machines without FUSE. Edit the files
in REPO directly (an editor, an agent's shell, a sync tool).

A burst of changes is committed once the writes pause for --debounce (never
later than --max-wait after its first change), as one commit whose message
lists what was added, updated, renamed and removed. Memory files are
validated first: an invalid file stays on disk as written, is not committed,
is reported in .engram/status and the log, and is committed as soon as it is
fixed. Editor and tool temp files (vim swap files, "4913", "~" backups,
sed -i temporaries, ".#" locks, *.tmp) and anything .gitignore ignores are
never committed. A read_only file that was changed is reported, not
committed.

The synthesized files user_memory.md, character_memory.md, CONTEXT.md and
.engram/status are written as real files at the top of REPO after every
change; the template's .gitignore keeps them out of git. git pull, git
revert or git commit run in REPO are picked up.

On start, anything valid left uncommitted is committed first ("engram:
recover N uncommitted changes"). The line "engram: watching REPO" on
standard output says the watch is live. SIGINT or SIGTERM commits what is
pending and exits 0. A full rescan every --rescan catches changes the
kernel's file notifications lost (0 turns it off).

Transcripts dropped into transcripts/ are consolidated into memories when
they have been quiet for --idle or --every new user messages arrived, or
when something is written to .engram/consolidate (model from ENGRAM_LLM,
ENGRAM_MODEL, OLLAMA_HOST, OPENAI_BASE_URL, OPENAI_API_KEY; see "engram help
consolidate"). Without a reachable model, watching works as usual and
.engram/status says consolidation is waiting.

Example:

    engram init ~/memory
    engram watch ~/memory --debounce 500ms`,
		flags: func(fl *flag.FlagSet) {
			daemon.register(fl)
		},
		run: func(fl *flag.FlagSet, args []string) error {
			if len(args) != 1 {
				fl.Usage()
				return exitError{2}
			}
			dir := args[0]
			log := slog.Default()
			_, _, tr, dr, err := daemon.start(dir, true, log)
			if err != nil {
				return err
			}
			if dr != nil {
				tr.OnControl(dr.request)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()

			runErr := make(chan error, 1)
			go func() { runErr <- tr.Run(ctx) }()
			select {
			case <-tr.Ready():
			case err := <-runErr:
				return err
			}
			// Recover once the watches are live, so that nothing written
			// between the scan and the watch can slip through.
			if err := tr.Recover(ctx); err != nil {
				stop()
				<-runErr
				return err
			}
			if dr != nil {
				dr.start(ctx)
			}
			fmt.Fprintf(stdout, "engram: watching %s\n", dir)
			err = <-runErr
			dr.wait()
			fctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// Sweep, not just Flush: a write whose event was still in the
			// kernel's queue when the watcher closed is committed too.
			if ferr := tr.Sweep(fctx); ferr != nil && err == nil {
				err = fmt.Errorf("commit pending changes: %w", ferr)
			}
			if err == nil {
				log.Info("stopped; pending changes committed", "repo", dir)
			}
			return err
		},
	})
}

// openEngramRepo opens dir as an engram repository: a git work tree with
// character.md or user.md at its top. Anything else gets an error that
// says how to make one.
func openEngramRepo(dir string) (*gitrepo.Repo, *memgraph.Graph, error) {
	if err := requireDir(dir); err != nil {
		return nil, nil, err
	}
	notEngram := fmt.Errorf("%s is not an engram repository: run engram init %s", dir, dir)
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		return nil, nil, notEngram
	}
	_, cerr := os.Stat(filepath.Join(dir, memgraph.CharacterFile))
	_, uerr := os.Stat(filepath.Join(dir, memgraph.UserFile))
	if cerr != nil && uerr != nil {
		return nil, nil, notEngram
	}
	r, err := gitrepo.Open(dir)
	if errors.Is(err, gitrepo.ErrNotRepo) {
		return nil, nil, notEngram
	}
	if err != nil {
		return nil, nil, err
	}
	g, err := memgraph.Scan(dir)
	if err != nil {
		return nil, nil, err
	}
	return r, g, nil
}
