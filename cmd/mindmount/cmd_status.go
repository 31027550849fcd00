package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/remote"
)

// statusCommand is "mindmount status".
var statusCommand = newCommand(command{
	name:    "status",
	usage:   "status REPO | status --root ROOT",
	summary: "show invalid files, uncommitted changes and the last commit",
	help: `Prints the report that a running "mindmount mount" or "mindmount watch" serves as
.mindmount/status, without needing one: the memory files that are invalid and
why (path:line: message), the changes in the working tree that are not
committed yet (a running daemon commits them after its debounce; otherwise
the next mount or watch commits them at start), and the last commit.

With --root ROOT it summarizes a mindmount serve ROOT instead: whether a
daemon serves it, and per user its state, last commit, consolidation and
invalid files. When the daemon runs with a mount and you are root, this is
the daemon's live MNT/.mindmount/status (users loaded, model queue);
otherwise each user is read from disk.

Example:

    mindmount status ~/memory
    mindmount status --root /srv/mindmount`,
}, runStatus)

// statusOptions are the flags of "mindmount status".
type statusOptions struct {
	root string
}

func (o *statusOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.root, "root", "", "summarize the mindmount serve `ROOT` instead of one repository")
}

// runStatus prints a repository's (or a serve ROOT's) status.
func runStatus(ctx context.Context, o *statusOptions, args []string) error {
	if o.root != "" {
		if len(args) != 0 {
			fmt.Fprintln(stderr, "mindmount status: give either REPO or --root ROOT")
			return exitError{2}
		}
		return statusRoot(ctx, o.root)
	}
	if len(args) != 1 {
		fmt.Fprintln(stderr, "mindmount status: missing REPO (or --root ROOT)")
		return exitError{2}
	}
	dir, err := filepath.Abs(args[0])
	if err != nil {
		return err
	}
	if handed, err := asOwner(ctx, []string{"status", dir}, dir); handed {
		return err
	}
	r, g, err := openMindmountRepo(dir)
	if err != nil {
		return err
	}
	// The report says everything; log lines would repeat it.
	tr := tracker.New(g, r, tracker.Config{Logger: slog.New(slog.DiscardHandler), Listener: tracker.Listener{
		// The last consolidation, then sync's remote,
		// ahead/behind, last push/fetch/failure.
		Status: func() string { return lastConsolidation(r.Dir()) + remote.StatusText(r) },
	}})
	if err := tr.Inspect(context.Background()); err != nil {
		return err
	}
	_, err = stdout.Write(tr.Status())
	return err
}

// statusRoot prints the summary of a serve ROOT: the live one from a
// running daemon's mount when we may read it, else one read from disk.
func statusRoot(ctx context.Context, root string) error {
	if err := requireDir(root); err != nil {
		return err
	}
	running, pid, mnt := host.Running(root)
	if running && mnt != "" {
		if b, err := os.ReadFile(filepath.Join(mnt, memgraph.StatusFile)); err == nil {
			fmt.Fprintf(stdout, "daemon: running (pid %s), mounted at %s\n", pid, mnt)
			_, err = stdout.Write(b)
			return err
		}
	}
	if running {
		fmt.Fprintf(stdout, "daemon: running (pid %s); each user's live state is in MNT/<id>/.mindmount/status (as that user or root); below, what the disk says\n", pid)
	} else {
		fmt.Fprintln(stdout, "daemon: not running")
	}
	b, err := host.StatusOf(root, func(dir string) string { return lastCommitAsOwner(ctx, dir) })
	if err != nil {
		return err
	}
	_, err = stdout.Write(b)
	return err
}

// statusLineCommand is the internal "mindmount status-line": status --root
// runs it, through asOwner, for each user whose repository another user
// owns, so that root never opens that repository with go-git.
var statusLineCommand = newCommand(command{
	name:  "status-line",
	usage: "status-line REPO (run by mindmount status --root, not by hand)",
	help: `Internal: prints the last commit of REPO as one line of mindmount status
--root, with the rights of REPO's owner (mindmount status --root runs it as
that user when it runs as root).`,
}, runStatusLine)

// runStatusLine prints REPO's last commit line, as REPO's owner.
func runStatusLine(ctx context.Context, _ *noOptions, args []string) error {
	if len(args) != 1 || !filepath.IsAbs(args[0]) {
		return errors.New("mindmount status-line is run by mindmount status --root")
	}
	if handed, err := asOwner(ctx, []string{"status-line", args[0]}, args[0]); handed {
		return err
	}
	fmt.Fprintln(stdout, host.LastCommitLine(args[0]))
	return nil
}

// lastCommitAsOwner is status --root's reader of a user's last commit:
// the asOwner rule decides — a repository root owns is read here, any
// other by "mindmount status-line" re-executed as its owner.
func lastCommitAsOwner(ctx context.Context, dir string) string {
	var out bytes.Buffer
	handed, err := asOwnerTo(ctx, &out, []string{"status-line", dir}, dir)
	if err != nil {
		return ""
	}
	if !handed {
		return host.LastCommitLine(dir)
	}
	return strings.TrimSpace(out.String())
}

// lastConsolidation is the status line of the last consolidation commit in
// dir (found by its author, consolidate.Author), or says there is none
// yet; "" when git cannot tell. Its git runs with a scrubbed
// configuration: a status reads, it runs none of the repository's programs.
func lastConsolidation(dir string) string {
	out, err := host.Git(dir, "log", "-1", "--no-show-signature",
		"--author=<"+consolidate.Author.Email+">", "--format=%h %s%n%aI").Output()
	if err != nil {
		return ""
	}
	line, when, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if line == "" {
		return "last consolidation: none yet (mindmount consolidate REPO, or a running mount or watch consolidates when idle)\n"
	}
	return fmt.Sprintf("last consolidation: %s\n  at %s\n", line, when)
}
