package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/hooks"
	"github.com/mindmount/mindmount/serve/control"
)

// consolidateCommand is "mindmount consolidate".
var consolidateCommand = newCommand(command{
	name:    "consolidate",
	usage:   "consolidate REPO [--model M] [--llm ollama|openai|anthropic] [--timeout D]",
	summary: "turn new transcripts into memories once, now",
	help: `Reads what is new in REPO/transcripts/ since the last consolidation (JSONL
chat messages, markdown or plain text with "User:" / "Assistant:" turns, or
any other text as one document), asks a language model which durable facts
it holds about the user and how to talk to them, and decides for each fact
whether to add a memory, update one, retire a contradicted one (the new
fact is always kept) or just mark an existing one as used.

Each chunk of messages becomes one git commit by "consolidator" holding the
memory changes and the advanced cursor (.mindmount/cursor.json), with the
transcript range and the model in the message. A chunk that fails changes
nothing and moves no cursor (chunks committed before it stay); run the
command again to retry. Passwords, API keys and card numbers are removed
before the model sees the transcript.

When a daemon serves REPO (mindmount mount, watch or serve), it is asked to
run the consolidation itself, with its model, through its control socket
(as mindmount sync asks it to sync): two writers on one repository would
race. The command waits for the daemon's run and prints its outcome.

` + providerEnvHelp + `
--llm and --model override MINDMOUNT_LLM and MINDMOUNT_MODEL.

Exits non-zero when the run fails, for instance when no model answers.`,
}, runConsolidateCommand)

// consolidateOptions are the flags of "mindmount consolidate": the model.
type consolidateOptions struct {
	providerOptions
}

// AddFlags declares the flags.
func (o *consolidateOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.Model, "model", "", "chat model (default $MINDMOUNT_MODEL, else llama3.2 / gpt-4o-mini / claude-haiku-4-5)")
	fl.StringVar(&o.LLM, "llm", "", "the model `PROVIDER`: ollama, openai or anthropic (default $MINDMOUNT_LLM, else ollama)")
	fl.DurationVar(&o.Timeout, "timeout", 0, "limit for each model call (default $MINDMOUNT_LLM_TIMEOUT, else 5m)")
}

func runConsolidateCommand(ctx context.Context, o *consolidateOptions, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	// Root consolidating another user's repository runs as that user
	// (asOwner): the dream's branch, the model call and the repository's
	// git config are the user's, never root's.
	dir, err := filepath.Abs(args[0])
	if err != nil {
		return err
	}
	argv := []string{"consolidate", "--model", o.Model, "--llm", o.LLM, "--timeout", o.Timeout.String(), dir}
	if handed, err := asOwner(ctx, argv, dir); handed {
		return err
	}
	return runConsolidate(ctx, dir, o.providerOptions)
}

// mergeCursorCommand is "mindmount merge-cursor", git's merge driver.
var mergeCursorCommand = newCommand(command{
	name:    "merge-cursor",
	usage:   "merge-cursor BASE OURS THEIRS",
	summary: "git merge driver for the consolidation cursor",
	help: `Merges two versions of .mindmount/cursor.json for git, keeping for every
transcript the further position, and writes the result to OURS. It makes
"git revert" of a consolidation commit undo the memories without the
messages being consolidated again, and lets two machines' histories merge.

Install it in a repository with:

  git config merge.mindmount-cursor.driver "mindmount merge-cursor %O %A %B"
  echo ".mindmount/cursor.json merge=mindmount-cursor" >> .gitattributes`,
}, runMergeCursor)

// runMergeCursor merges the cursor files BASE, OURS and THEIRS into OURS.
func runMergeCursor(_ context.Context, _ *noOptions, args []string) error {
	if len(args) != 3 {
		return errUsage
	}
	return hooks.CursorDriver(args[0], args[1], args[2]) // an absent base: no common ancestor
}

// runConsolidate consolidates dir's new transcripts now: through the
// daemon serving dir, else itself.
func runConsolidate(ctx context.Context, dir string, opt providerOptions) error {
	if err := requireMindmountRepo(dir); err != nil {
		return err
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A daemon serving the repository is its one writer: it runs the
	// consolidation (with its own model), as it syncs for mindmount sync.
	a, err := control.Ask(ctx, r.GitDir(), control.Request{Verb: control.Consolidate})
	if !errors.Is(err, control.ErrNoDaemon) {
		var rep consolidate.Report
		if len(a.Data) > 0 {
			if jerr := json.Unmarshal(a.Data, &rep); jerr != nil && err == nil {
				err = fmt.Errorf("the daemon's report: %w", jerr)
			}
		}
		if err != nil {
			err = fmt.Errorf("the daemon serving %s: %w", dir, err)
		} else {
			fmt.Fprintf(stdout, "Consolidated by the daemon serving %s.\n", dir)
		}
		return printRun(rep, err)
	}
	unlock, err := r.LockDaemon()
	if errors.Is(err, gitrepo.ErrDaemonRunning) {
		// A daemon without a control socket (an older one, or one whose
		// socket another process held): its control file still reaches it.
		return askDaemonConsolidate(dir)
	}
	if err != nil {
		return err
	}
	defer unlock() // no daemon starts on the repository while this runs
	p, err := newProvider(opt)
	if err != nil {
		return err
	}
	g, err := tracker.ScanServed(r.Dir()) // a held-back memory never reaches the model
	if err != nil {
		return err
	}
	useCachedVectors(g)
	c := consolidate.New(tracker.New(g, r, tracker.Config{}), p, consolidate.Config{Logger: slog.Default(), MergeFile: hooks.DreamMerger})
	rep, err := c.Run(ctx)
	switch {
	case errors.Is(err, llm.ErrNoModel):
		where := p.Name()
		if e, ok := p.(llm.Endpoint); ok {
			where = e.Endpoint()
		}
		err = fmt.Errorf("no model answers at %s (%s): %w", where, noModelHint(p), err)
	case err != nil:
		err = fmt.Errorf("consolidation failed, nothing was changed for the remaining messages: %w", err)
	}
	return printRun(rep, err)
}

// printRun prints a consolidation's report, whoever ran it, and returns
// its error.
func printRun(rep consolidate.Report, err error) error {
	for _, pr := range rep.Problems {
		fmt.Fprintf(stderr, "warning: %s\n", pr)
	}
	if err != nil {
		if len(rep.Commits) > 0 {
			fmt.Fprintf(stdout, "partly done: %s\n", rep)
		}
		return err
	}
	fmt.Fprintln(stdout, rep)
	for _, h := range rep.Commits {
		fmt.Fprintf(stdout, "commit %s\n", h)
	}
	return nil
}

// askDaemonConsolidate asks the daemon serving dir for a consolidation run
// through its control file (.mindmount/consolidate, which its tracker
// hears in mount and watch mode alike) and waits until the daemon took it.
func askDaemonConsolidate(dir string) error {
	ctl := filepath.Join(dir, filepath.FromSlash(tracker.ControlFile))
	if err := os.WriteFile(ctl, []byte("now\n"), 0o600); err != nil {
		return fmt.Errorf("ask the running daemon: %w", err)
	}
	deadline := time.Now().Add(askTimeout)
	for {
		if _, err := os.Lstat(ctl); errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(stdout, "Asked the daemon serving %s to consolidate now; mindmount status %s shows the outcome.\n", dir, dir)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the daemon serving %s did not take the request within %s (is its consolidation off? see its log)", dir, askTimeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// askTimeout bounds the wait for a daemon to take a request.
const askTimeout = 10 * time.Second
