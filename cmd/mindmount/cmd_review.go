package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/mindmount/mindmount/cmd/mindmount/internal/control"
	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/gitrepo"
	"github.com/mindmount/mindmount/hooks"
	"github.com/mindmount/mindmount/memgraph"
)

// ReviewOptions are the flags of "mindmount review".
type ReviewOptions struct {
	Reason string // reject: why, recorded in the rejection's commit
}

// AddFlags declares the flags.
func (o *ReviewOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.Reason, "reason", "", "reject: why, recorded in the commit (one line)")
}

func init() {
	var opts ReviewOptions
	register(&command{
		name:    "review",
		usage:   "review [REPO] | review show N [REPO] | review approve N [REPO] | review reject N [REPO] [--reason R]",
		summary: "list, show, approve or reject the consolidations waiting for a person",
		help: `Consolidation dreams on a branch of its own (mindmount/dream/N): it works
against the memory as it was when it started, so the agent keeps writing
meanwhile, and its proposal is then merged with one merge commit. With
"merge: review" in the repository's .git/mindmount/config (never in the
tracked tree, where an agent could switch it off) the dream waits for you:

  review [REPO]             lists the waiting dreams: what each would add,
                            update or retire, with the facts
  review show N [REPO]      prints the diff of dream N
  review approve N [REPO]   merges it (one merge commit; the merge drivers keep
                            both versions when the agent changed the same
                            memory meanwhile)
  review reject N [REPO]    drops it: no memory changes, and its transcripts
                            are never proposed again (a small commit moves
                            the consolidation cursor past them and records
                            the rejection and --reason); its branch is
                            deleted

An automatic merge that could not be settled also leaves its dream here.
REPO defaults to the current folder. "git revert -m 1 <merge>" undoes an
approved dream later; it stays undone.

Example:

    printf 'merge: review\n' >> ~/memory/.git/mindmount/config
    mindmount review ~/memory
    mindmount review show 3 ~/memory
    mindmount review approve 3 ~/memory`,
		flags: opts.AddFlags,
		run: func(fl *flag.FlagSet, args []string) error {
			return runReview(fl, opts, args)
		},
	})
}

func runReview(fl *flag.FlagSet, opts ReviewOptions, args []string) error {
	action, n := "list", 0
	if len(args) > 0 {
		switch args[0] {
		case "show", "approve", "reject":
			if len(args) < 2 {
				fmt.Fprintf(stderr, "mindmount review %s: missing the dream's number N\n", args[0])
				return exitError{2}
			}
			k, err := strconv.Atoi(args[1])
			if err != nil || k < 1 {
				fmt.Fprintf(stderr, "mindmount review %s: %q is not a dream's number\n", args[0], memgraph.ClipLine(args[1], 40))
				return exitError{2}
			}
			action, n, args = args[0], k, args[2:]
		}
	}
	if len(args) > 1 {
		fl.Usage()
		return exitError{2}
	}
	dir := "."
	if len(args) == 1 {
		dir = args[0]
	}
	ctx := context.Background()
	if action == "approve" || action == "reject" {
		if done, err := askDaemonReview(ctx, dir, action, n, opts.Reason); done || err != nil {
			return err
		}
	}
	c, done, err := openReview(dir, action != "list" && action != "show")
	if err != nil {
		return err
	}
	defer done()
	switch action {
	case "show":
		diff, err := c.DreamDiff(n)
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(stdout, diff)
		return err
	case "approve":
		hash, err := c.Approve(ctx, n)
		return printVerdict(action, n, hash, err)
	case "reject":
		hash, err := c.Reject(ctx, n, opts.Reason)
		return printVerdict(action, n, hash, err)
	}
	dreams, err := c.Dreams()
	if err != nil {
		return err
	}
	if len(dreams) == 0 {
		fmt.Fprintf(stdout, "No dream waits for review (merge: %s).\n", c.MergeMode())
		return nil
	}
	for _, d := range dreams {
		fmt.Fprint(stdout, ReviewSummary(d))
	}
	return nil
}

// askDaemonReview asks the daemon serving dir, the repository's one
// writer, to approve or reject dream n; done is false when no daemon
// answers (the command then does it itself).
func askDaemonReview(ctx context.Context, dir, action string, n int, reason string) (done bool, err error) {
	if err := requireMindmountRepo(dir); err != nil {
		return false, err
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		return false, err
	}
	verb := control.Approve
	if action == "reject" {
		verb = control.Reject
	}
	a, err := control.Ask(ctx, r.GitDir(), control.Request{Verb: verb, N: n, Reason: reason})
	if errors.Is(err, control.ErrNoDaemon) {
		return false, nil
	}
	return true, printVerdict(action, n, a.Commit, err)
}

// printVerdict says what approve or reject did.
func printVerdict(action string, n int, hash string, err error) error {
	switch {
	case err != nil:
		return err
	case action == "approve":
		fmt.Fprintf(stdout, "merged %s%d as %s\n", consolidate.DreamPrefix, n, gitrepo.ShortHash(hash))
	default:
		fmt.Fprintf(stdout, "rejected %s%d (%s): its transcripts will not be proposed again\n", consolidate.DreamPrefix, n, gitrepo.ShortHash(hash))
	}
	return nil
}

// ReviewSummary is how the CLI shows one waiting dream.
func ReviewSummary(d consolidate.Dream) string {
	var b strings.Builder
	a, u, x := d.Counts()
	fmt.Fprintf(&b, "%d  %s  %s: %d added, %d updated, %d contradicted\n", d.N, d.Branch, strings.Join(d.Sources, ", "), a, u, x)
	for _, ch := range d.Changes {
		if ch.Kind == "used" {
			continue
		}
		fmt.Fprintf(&b, "   %-12s %s — %s\n", ch.Kind, ch.Path, memgraph.ClipLine(ch.Fact, 120))
	}
	return b.String()
}

// openReview opens dir's consolidator for review. write says the action
// commits: then no daemon may serve dir (it is the one writer, asked
// through its control socket, its HTTP API or its web page).
func openReview(dir string, write bool) (*consolidate.Consolidator, func(), error) {
	if err := requireMindmountRepo(dir); err != nil {
		return nil, nil, err
	}
	r, g, err := openMindmountRepo(dir)
	if err != nil {
		return nil, nil, err
	}
	done := func() {}
	if write {
		unlock, err := r.LockDaemon()
		if errors.Is(err, gitrepo.ErrDaemonRunning) {
			// It runs without a control socket (askDaemonReview found none).
			return nil, nil, fmt.Errorf("a daemon serves %s but does not answer on its control socket (see its log): approve or reject through its HTTP API or web page, or stop it first", dir)
		}
		if err != nil {
			return nil, nil, err
		}
		done = unlock
	}
	tr := tracker.New(g, r, tracker.Config{Logger: slog.New(slog.DiscardHandler)})
	return consolidate.New(tr, nil, consolidate.Config{Logger: slog.New(slog.DiscardHandler), MergeMemory: hooks.DreamMerger}), done, nil
}
