package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/hooks/harness"
	"github.com/mindmount/mindmount/memgraph"
)

// runOptions are the flags of "mindmount run".
type runOptions struct {
	repo       string
	budget     int
	transcript string
	every      time.Duration
}

// "mindmount run -- AGENT ARGS" wires any agent without hooks: the context
// goes in through the environment and a file, the transcript comes back
// when the agent writes one.
// agentCommand is "mindmount run".
var agentCommand = newCommand(command{
	name:    "run",
	usage:   "run [--repo DIR] [--transcript FILE] -- AGENT [ARGS...]",
	summary: "run an agent with the memory's context, and keep its transcript",
	help: `Runs AGENT with the compiled context of the memory (--repo or
$MINDMOUNT_REPO, a repository or a mount) in its environment:

  MINDMOUNT_REPO          the memory's folder
  MINDMOUNT_CONTEXT_FILE  a private file holding the context (CONTEXT.md)
  MINDMOUNT_CONTEXT       the same text, for agents that take a prompt string
  MINDMOUNT_TRANSCRIPT    where the agent may write its conversation as JSONL
                       ({"role":"user","content":"..."} per line)

The transcript (MINDMOUNT_TRANSCRIPT, or --transcript FILE when the agent
writes its own log elsewhere) is copied into the memory's transcripts/
while the agent runs (every --every) and when it exits, new lines only,
so consolidation learns from the session. mindmount run exits with the
agent's status.

Example:

    mindmount run --repo ~/mnt -- sh -c 'my-agent --system-prompt-file "$MINDMOUNT_CONTEXT_FILE"'`,
}, runRun)

func (o *runOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.repo, "repo", "", "the memory (repository or mount); default $MINDMOUNT_REPO")
	fl.IntVar(&o.budget, "budget", memgraph.DefaultContextBytes, "most `bytes` of context to pass")
	fl.StringVar(&o.transcript, "transcript", "", "the agent's own transcript `file` to record (default: $MINDMOUNT_TRANSCRIPT)")
	fl.DurationVar(&o.every, "every", time.Minute, "how often to copy the transcript while the agent runs (0 = only at exit)")
}

// runRun runs an agent with its memory.
func runRun(_ context.Context, o *runOptions, args []string) error {
	if len(args) == 0 {
		return errUsage
	}
	return runAgent(*o, args)
}

func runAgent(opts runOptions, argv []string) error {
	dir, err := hookMemory(opts.repo)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "mindmount-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	text := harness.Context(dir, opts.budget)
	ctxFile := filepath.Join(tmp, "CONTEXT.md")
	if err := os.WriteFile(ctxFile, []byte(text), 0o600); err != nil {
		return err
	}
	transcript := opts.transcript
	if transcript == "" {
		transcript = filepath.Join(tmp, "transcript.jsonl")
	} else if transcript, err = filepath.Abs(transcript); err != nil {
		return err
	}
	session := newSessionID()

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.Env = append(os.Environ(),
		"MINDMOUNT_REPO="+dir,
		"MINDMOUNT_CONTEXT_FILE="+ctxFile,
		"MINDMOUNT_CONTEXT="+text,
		"MINDMOUNT_TRANSCRIPT="+transcript,
	)
	// The terminal's Ctrl-C reaches the agent directly (same process
	// group); we only pass on what is sent to us, and outlive the agent
	// long enough to record its last turns.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return err
	}
	record := func() {
		if _, err := os.Stat(transcript); err != nil {
			return
		}
		if _, err := harness.Copy(harness.CopyOptions{Memory: dir, Harness: harness.Run, SessionID: session, Source: transcript}); err != nil {
			fmt.Fprintf(stderr, "mindmount run: transcript: %s\n", memgraph.ErrorLine(err.Error()))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go relay(ctx, done, cmd.Process, sigs, opts.every, record)
	werr := cmd.Wait()
	cancel()
	<-done
	record()
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if code := ee.ExitCode(); code >= 0 {
			return exitError{code}
		}
		return exitError{1} // killed by a signal
	}
	return werr
}

// relay passes the signals sent to us on to the agent and records the
// transcript every interval (0: never) until ctx ends; it closes done.
func relay(ctx context.Context, done chan<- struct{}, agent *os.Process, sigs <-chan os.Signal, every time.Duration, record func()) {
	defer close(done)
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-sigs:
			_ = agent.Signal(s)
		case <-tick:
			record()
		}
	}
}

// newSessionID names a wrapped session: time first, so transcripts sort.
func newSessionID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}
