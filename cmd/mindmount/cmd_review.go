package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/hooks"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/serve/control"
)

// reviewCommand is "mindmount review": the list, and its subcommands.
var reviewCommand = newCommand(command{
	name:    "review",
	usage:   "review [REPO] | review show|reject N [REPO] | review approve N --tip SHA [REPO]",
	summary: "list, show, approve or reject the consolidations waiting for a person",
	help: `Consolidation dreams on a branch of its own (mindmount/dream/N): it works
against the memory as it was when it started, so the agent keeps writing
meanwhile, and its proposal is then merged with one merge commit. With
"merge: review" in the repository's .git/mindmount/config (never in the
tracked tree, where an agent could switch it off) the dream waits for you:

  review [REPO]             lists the waiting dreams: what each would add,
                            update or retire, with the facts, and its tip
  review show N [REPO]      prints dream N's tip and its diff
  review approve N --tip SHA [REPO]
                            merges dream N as it was shown: SHA is the tip
                            review printed; if the dream changed since,
                            nothing is merged (one merge commit; the merge
                            drivers keep both versions when the agent
                            changed the same memory meanwhile); its branch
                            is then deleted
  review reject N [REPO]    drops it: no memory changes, and its transcripts
                            are never proposed again (a small commit moves
                            the consolidation cursor past them and records
                            the rejection and --reason); its branch is
                            deleted

With --team TEAM the same commands review the proposals to a team joined
with "mindmount team join" (branches mindmount/proposal/<user>/<n>; approve
and reject need the maintain role):

  review list --team TEAM REPO
  review show --team TEAM REPO BRANCH
  review approve --team TEAM --tip SHA REPO BRANCH
  review reject --team TEAM REPO BRANCH

Under "mindmount serve", REPO is your own repository there (ROOT/users/
<you>): list, approve and reject are asked of your worker, which asks the
team's writer; the writer decides by your role in ROOT/teams.conf.

A dream is listed once the consolidation writing it has finished. An
automatic merge that could not be settled also leaves its dream here.
REPO defaults to the current folder. "git revert -m 1 <merge>" undoes an
approved dream later; it stays undone.

Example:

    printf 'merge: review\n' >> ~/memory/.git/mindmount/config
    mindmount review ~/memory
    mindmount review show 3 ~/memory          # tip 1a2b3c4d5e6f…
    mindmount review approve 3 --tip 1a2b3c4d5e6f ~/memory`,
	subs: []*command{
		teamReviewListCommand,
		newCommand(command{
			name:    "show",
			usage:   "review show N [REPO]",
			summary: "print the tip and diff of waiting dream N",
			help: `Prints the tip of waiting dream N (what "review approve N --tip" takes)
and the diff of what it proposes, against the commit it started from.`,
		}, runReviewShowOrTeam),
		newCommand(command{
			name:    "approve",
			usage:   "review approve N --tip SHA [REPO]",
			summary: "merge waiting dream N as it was shown (one merge commit)",
			help: `Merges waiting dream N into the live branch with one merge commit, as
"merge: auto" would have; the merge drivers keep both versions of a memory
the agent changed meanwhile. --tip is the dream's tip that "review" or
"review show" printed (at least 7 hex digits): if the dream's branch is no
longer there, nothing is merged and the command says so. The branch is
deleted after the merge. A daemon serving REPO is asked to do it.`,
		}, runReviewApprove),
		newCommand(command{
			name:    "reject",
			usage:   "review reject N [REPO] [--reason R]",
			summary: "drop waiting dream N for good (no memory changes; its branch is deleted)",
			help: `Drops waiting dream N: no memory changes, a small commit moves the
consolidation cursor past its transcripts (so they are never proposed
again) and records the rejection and --reason; then its branch is deleted.
A daemon serving REPO is asked to do it.`,
		}, runReviewReject),
	},
}, runReviewList)

// approveOptions are the flags of "mindmount review approve".
type approveOptions struct {
	tip  string // the dream's tip as it was shown
	team string // a team's proposal instead of a dream (cmd_review_team.go)
}

func (o *approveOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.tip, "tip", "", "the dream's tip `SHA` as review printed it (required)")
	fl.StringVar(&o.team, "team", "", "approve a proposal to the joined team `TEAM` (then: REPO BRANCH)")
}

// rejectOptions are the flags of "mindmount review reject".
type rejectOptions struct {
	reason string // recorded in the rejection's commit
	team   string // a team's proposal instead of a dream (cmd_review_team.go)
}

func (o *rejectOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.reason, "reason", "", "`WHY`, recorded in the commit (one line)")
	fl.StringVar(&o.team, "team", "", "reject a proposal to the joined team `TEAM` (then: REPO BRANCH)")
}

// runReviewList lists the waiting dreams.
func runReviewList(ctx context.Context, _ *noOptions, args []string) error {
	dir, err := reviewDir(args)
	if err != nil {
		return err
	}
	if handed, err := reviewAsOwner(ctx, dir, "review"); handed {
		return err
	}
	return reading(dir, printDreams)
}

// reading runs fn on dir's consolidator, opened for reading.
func reading(dir string, fn func(c *consolidate.Consolidator) error) error {
	c, done, err := openReview(dir, false)
	if err != nil {
		return err
	}
	defer done()
	return fn(c)
}

// printDreams lists the waiting dreams of c.
func printDreams(c *consolidate.Consolidator) error {
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

// runReviewShow prints the diff of a waiting dream.
func runReviewShow(ctx context.Context, _ *noOptions, args []string) error {
	n, dir, err := dreamArgs(args)
	if err != nil {
		return err
	}
	if handed, err := reviewAsOwner(ctx, dir, "review", "show", strconv.Itoa(n)); handed {
		return err
	}
	return reading(dir, func(c *consolidate.Consolidator) error {
		d, diff, err := c.ShowDream(n)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "dream %d %s tip %s\n", d.N, d.Branch, d.Tip)
		_, err = fmt.Fprint(stdout, diff)
		return err
	})
}

// runReviewApprove merges a waiting dream.
func runReviewApprove(ctx context.Context, o *approveOptions, args []string) error {
	if o.tip == "" {
		return usageError{"--tip is required: the dream's tip as mindmount review printed it"}
	}
	if o.team != "" {
		return teamReviewVerdict(ctx, o.team, o.tip, true, args)
	}
	return reviewVerdict(ctx, control.Request{Verb: control.Approve, Tip: o.tip}, args)
}

// runReviewReject drops a waiting dream.
func runReviewReject(ctx context.Context, o *rejectOptions, args []string) error {
	if o.team != "" {
		return teamReviewVerdict(ctx, o.team, "", false, args)
	}
	return reviewVerdict(ctx, control.Request{Verb: control.Reject, Reason: o.reason}, args)
}

// reviewVerdict approves or rejects dream N of REPO (args): through the
// daemon serving REPO, its one writer, else itself.
func reviewVerdict(ctx context.Context, req control.Request, args []string) error {
	n, dir, err := dreamArgs(args)
	if err != nil {
		return err
	}
	req.N = n
	argv := []string{"review", "reject", "--reason", req.Reason, strconv.Itoa(n)}
	if req.Verb == control.Approve {
		argv = []string{"review", "approve", "--tip", req.Tip, strconv.Itoa(n)}
	}
	if handed, err := reviewAsOwner(ctx, dir, argv...); handed {
		return err
	}
	if done, err := askDaemonReview(ctx, dir, req); done || err != nil {
		return err
	}
	c, done, err := openReview(dir, true)
	if err != nil {
		return err
	}
	defer done()
	var hash string
	if req.Verb == control.Approve {
		hash, err = c.Approve(ctx, n, req.Tip)
	} else {
		hash, err = c.Reject(ctx, n, req.Reason)
	}
	return printVerdict(req.Verb, n, hash, err)
}

// reviewAsOwner runs "mindmount ARGV… DIR" as the owner of dir when root
// reviews another user's repository (asOwner): the dream's branch, its
// merge and the repository's git config are that user's, never root's.
func reviewAsOwner(ctx context.Context, dir string, argv ...string) (bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return true, err
	}
	return asOwner(ctx, append(argv, abs), abs)
}

// reviewDir is the repository of "review [REPO]": the current folder by
// default.
func reviewDir(args []string) (string, error) {
	switch len(args) {
	case 0:
		return ".", nil
	case 1:
		return args[0], nil
	}
	return "", errUsage
}

// dreamArgs reads "N [REPO]".
func dreamArgs(args []string) (int, string, error) {
	n, err := strconv.Atoi(args[0]) // missingArgs made sure of N
	if err != nil || n < 1 {
		return 0, "", usageError{fmt.Sprintf("%q is not a dream's number", memgraph.ClipLine(args[0], 40))}
	}
	dir, err := reviewDir(args[1:])
	return n, dir, err
}

// askDaemonReview asks the daemon serving dir, the repository's one
// writer, for req (approve or reject); done is false when no daemon
// answers (the command then does it itself).
func askDaemonReview(ctx context.Context, dir string, req control.Request) (done bool, err error) {
	if err := requireMindmountRepo(dir); err != nil {
		return false, err
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		return false, err
	}
	a, err := control.Ask(ctx, r.GitDir(), req)
	if errors.Is(err, control.ErrNoDaemon) {
		return false, nil
	}
	return true, printVerdict(req.Verb, req.N, a.Commit, err)
}

// printVerdict says what approve or reject did.
func printVerdict(verb control.Verb, n int, hash string, err error) error {
	switch {
	case err != nil:
		return err
	case verb == control.Approve:
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
	fmt.Fprintf(&b, "%d  %s  %s: %d added, %d updated, %d contradicted\n", d.N, d.Branch, memgraph.SafeLine(strings.Join(d.Sources, ", ")), a, u, x)
	fmt.Fprintf(&b, "   tip %s\n", d.Tip)
	for _, ch := range d.Changes {
		if ch.Kind == "used" {
			continue
		}
		fmt.Fprintf(&b, "   %-12s %s — %s\n", ch.Kind, memgraph.SafeLine(ch.Path), memgraph.ClipLine(ch.Fact, 120))
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
	return consolidate.New(tr, nil, consolidate.Config{Logger: slog.New(slog.DiscardHandler), MergeFile: hooks.DreamMerger}), done, nil
}
