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
	"strings"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/remote"
)

// syncCommand is "mindmount sync".
var syncCommand = newCommand(command{
	name:    "sync",
	usage:   "sync REPO",
	summary: "sync the memory repository with its remote now",
	help: `Fetches the remote (see "mindmount remote"), merges what it has with mindmount's
merge drivers (one merge commit; a memory changed on both sides keeps the
newer version in place and the other as a retired sibling), and pushes.
When a daemon (mount, watch, serve) serves REPO, it asks that daemon to
sync and waits for the outcome; otherwise it syncs itself. A daemon that
serves REPO but cannot be asked (its control socket gone, or a serve
whose worker for the user is not running) is never written beside:
sync refuses and says why. Run as root on a repository another user owns,
sync runs as that user.

The token comes from $MINDMOUNT_GIT_TOKEN or the credentials file (see
"mindmount remote"); for a serve user's repository (ROOT/users/<id>) it is
ROOT/credentials/<id>/git, as for that user's worker, never the
environment. A running daemon also syncs by itself: it pushes a few
seconds after each commit and fetches every few minutes.`,
}, runSync)

// syncOptions are the flags of "mindmount sync".
type syncOptions struct {
	timeout time.Duration
}

func (o *syncOptions) AddFlags(fl *flag.FlagSet) {
	fl.DurationVar(&o.timeout, "timeout", 5*time.Minute, "give up after this long")
}

// runSync syncs a repository with its remote now.
func runSync(_ context.Context, o *syncOptions, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	dir, err := filepath.Abs(args[0])
	if err != nil {
		return err
	}
	if handed, err := asOwner(ctx, []string{"sync", "--timeout", o.timeout.String(), dir}, dir); handed {
		return err
	}
	return syncNow(ctx, dir)
}

// syncNow syncs dir through its daemon, or directly when none serves it:
// no daemon answers on the control socket, none holds the repository's
// daemon lock and no mindmount serve serves the ROOT it lies in (a user's
// worker may be stopped, or its socket deleted, while serve runs).
func syncNow(ctx context.Context, dir string) error {
	if err := requireMindmountRepo(dir); err != nil {
		return err
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		return err
	}
	if _, err := remote.URL(r.Dir()); err != nil {
		return err
	}
	st, err := remote.AskDaemon(ctx, r.GitDir())
	if errors.Is(err, remote.ErrNoDaemon) {
		if pid, served := host.ServedBy(dir); served {
			return fmt.Errorf("%w: mindmount serve (pid %s) serves %s, and its sync runs there: the user's worker is not running or its control socket is gone; it syncs by itself once it runs (any access to MNT/<id> starts it), or stop serve first", errNotAnswering, pid, dir)
		}
		unlock, lerr := r.LockDaemon()
		if errors.Is(lerr, gitrepo.ErrDaemonRunning) {
			return fmt.Errorf("%w: %w; its control socket (.git/%s) is gone: restart it, or stop it and sync again", errNotAnswering, lerr, control.SocketFile)
		}
		if lerr != nil {
			return lerr
		}
		defer unlock()
		var res remote.Result
		sroot, id, _ := host.ServedUser(r.Dir())
		res, err = remote.New(r, remote.Options{Credentials: syncCredentials(sroot, id), Logger: slog.New(slog.DiscardHandler)}).Sync(ctx)
		if err == nil {
			fmt.Fprintf(stdout, "Synced: %s\n", res)
		}
		st = remote.ReadState(r)
		st.Alone = true
		if n := uncommitted(r.Dir()); n > 0 {
			// Without a daemon nothing commits them, so they are not synced.
			fmt.Fprintf(stdout, "%d uncommitted change(s) in %s are not synced: commit them (git -C %s commit -a), or start mindmount watch %s (or mount), which commits and syncs for you.\n", n, dir, dir, dir)
		}
	} else if err == nil {
		fmt.Fprintln(stdout, "Synced by the running daemon.")
	}
	fmt.Fprint(stdout, st.Text())
	return err
}

// syncCredentials is the one home of which token a sync uses: a served
// user's (root is its serve ROOT) is ROOT/credentials/<id>/git, for the
// worker's sync and a sync run in place alike, never the environment; a
// single repository's is the environment's or the default credentials
// file's.
func syncCredentials(root, id string) remote.Credentials {
	if root != "" {
		return remote.CredentialsFor(root, id)
	}
	return remote.FromEnv()
}

// syncService is the daemons' sync loop (host.RuntimeConfig.Services): it
// pushes after commits and fetches periodically, beside the write path.
// A served user's token is ROOT/credentials/<id>; a single repository's
// comes from the environment or the default credentials file.
func syncService(ctx context.Context, rt *host.Runtime, timing remote.Timing) {
	s := remote.New(rt.Repo, remote.Options{
		Credentials: syncCredentials(rt.Root, rt.ID),
		Writer:      rt.Tracker,
		Logger:      slog.Default().With("user", rt.ID),
	})
	rt.Listeners.Add(tracker.Listener{
		Changed: func([]string) { s.Kick() }, // a commit: push soon
		Status:  func() string { return remote.StatusText(rt.Repo) },
	})
	rt.Handle(control.Sync, s.Answer) // "mindmount sync" while the daemon runs
	s.Serve(ctx, timing)
}

// errNotAnswering means a daemon serves the repository but cannot be
// asked: the command refuses rather than write beside it.
var errNotAnswering = errors.New("a daemon serves this repository but does not answer")

// uncommitted counts the changed tracked files of the work tree at dir
// (untracked and ignored files, the transcripts, are not counted). Its
// git runs with a scrubbed configuration.
func uncommitted(dir string) int {
	out, err := host.Git(dir, "status", "--porcelain", "--untracked-files=no").Output()
	if err != nil {
		return 0
	}
	s := strings.TrimSpace(string(out))
	if s == "" {
		return 0
	}
	return len(strings.Split(s, "\n"))
}
