package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/cmd/mindmount/host"
	"github.com/mindmount/mindmount/consolidate/llm"
	enfs "github.com/mindmount/mindmount/fs"
)

// serveFront is one way mindmount serve exposes its users besides the mount
// (HTTP, MCP). Other files add theirs to serveFronts from init().
type serveFront struct {
	name  string
	flags func(fl *flag.FlagSet)
	// start runs the front until ctx ends; it returns once ready (or failed).
	start func(ctx context.Context, h *host.Host) (wait func() error, err error)
	// ready, when set, describes the started front for the readiness
	// line ("http on 127.0.0.1:8080"); "" adds nothing.
	ready func() string
}

var serveFronts []*serveFront

// serveOptions are mindmount serve's flags.
type serveOptions struct {
	daemon         daemonFlags
	root, mount    string
	unloadAfter    time.Duration
	llmConcurrency int
	debug          bool
}

func (o *serveOptions) register(fl *flag.FlagSet) {
	o.daemon.register(fl)
	fl.StringVar(&o.root, "root", "", "the serve `ROOT`: ROOT/users.json and one repository per user under ROOT/users/<id>")
	fl.StringVar(&o.mount, "mount", "", "mount every user's memory at `MNT`/<id> (FUSE)")
	fl.DurationVar(&o.unloadAfter, "unload-after", 10*time.Minute, "unload a user idle this long, committing what is pending first")
	fl.IntVar(&o.llmConcurrency, "llm-concurrency", 2, "model calls running at once, shared fairly by all users")
	fl.BoolVar(&o.debug, "debug", false, "log every FUSE request")
	for _, f := range serveFronts {
		if f.flags != nil {
			f.flags(fl)
		}
	}
}

func init() {
	var opts serveOptions
	register(&command{
		name:    "serve",
		usage:   "serve --root ROOT [--mount MNT] [--http ADDR] [--unload-after 10m] [--llm-concurrency 2]",
		summary: "serve every user's memory from one daemon (multi-user mount, fronts)",
		help: `Serves every user registered under ROOT (mindmount users add): ROOT/users/<id>
is an ordinary mindmount repository, usable alone with mindmount mount when no
daemon serves it. With --mount, MNT/<id>/ shows exactly what mindmount mount
shows for that repository: the files, user_memory.md, character_memory.md,
CONTEXT.md, .mindmount/status, .mindmount/search/QUERY and .mindmount/consolidate.

Isolation: MNT/<id> and everything in it belongs to the user's uid and gid
(the directory is mode 0700). A process whose uid is neither root nor the
user's gets EACCES under MNT/<id> and does not see the user in "ls MNT";
the daemon checks every request's credentials itself. Unknown users are
ENOENT. A user whose repository is missing or broken shows only
.mindmount/status saying why; the other users are not affected. MNT/.mindmount/status
(root only) summarizes the daemon: users loaded, the model queue, per user
its last commit, consolidation and invalid files.

Bind-mount MNT/<id> into a sandbox or container to give an agent its
memory (see the README, "Many users and containers").

Users load on first access and unload after --unload-after without use,
committing what is pending first. A user added or removed with mindmount
users is picked up at its next access; SIGHUP re-reads the user list at
once. All users share --llm-concurrency model calls, queued fairly.

The line "mindmount: serving ROOT" on standard output (and READY=1 to
systemd's NOTIFY_SOCKET) says the daemon is ready. SIGINT or SIGTERM
commits what is pending for every loaded user, unmounts and exits 0. When
the mount is unmounted from outside (fusermount3 -u), the daemon commits
what is pending and exits with status 1. Only one daemon serves a ROOT.

Example:

    mkdir -p /srv/mindmount /mnt/mindmount
    mindmount users add /srv/mindmount alice --uid 1001 --gid 1001
    mindmount serve --root /srv/mindmount --mount /mnt/mindmount`,
		flags: opts.register,
		run: func(fl *flag.FlagSet, args []string) error {
			if len(args) != 0 || opts.root == "" {
				fmt.Fprintln(stderr, "mindmount serve: --root ROOT is required (see mindmount serve --help)")
				return exitError{2}
			}
			if h := fl.Lookup("http"); opts.mount == "" && (h == nil || h.Value.String() == "") {
				fmt.Fprintln(stderr, "mindmount serve: say what to serve: --mount MNT (each user's memory as files), --http ADDR (the HTTP API and MCP), or both")
				return exitError{2}
			}
			return runServe(&opts, slog.Default())
		},
	})
}

// runServe runs the daemon until SIGINT/SIGTERM (nil: everything pending
// committed) or until the mount is taken away from outside (an error).
func runServe(o *serveOptions, log *slog.Logger) error {
	cfg := o.daemon.runtimeConfig(false, log)
	if o.mount != "" {
		// Checked before anything starts: a mount that cannot happen
		// changes nothing.
		if err := enfs.CheckMount(o.root, o.mount, enfs.UsersAllowOther); err != nil {
			return err
		}
	}
	h, err := host.New(host.Config{
		Root:        o.root,
		Runtime:     cfg,
		ProviderFor: modelShares(cfg, o.llmConcurrency),
		UnloadAfter: o.unloadAfter,
		Logger:      log,
		Mount:       o.mount,
	})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		h.Run(ctx)
	}()

	var (
		us   *enfs.UsersServer
		gone <-chan struct{}
	)
	if o.mount != "" {
		us, err = serveMount(h, o.mount, enfs.UsersOptions{Options: enfs.Options{Debug: o.debug, Logger: log}})
		if err != nil {
			stop()
			<-reaped
			h.Close(context.Background())
			return err
		}
		gone = unmountedOutside(us.Server())
	}

	frontCtx, stopFronts := context.WithCancel(ctx)
	defer stopFronts()
	frontErr := make(chan error, len(serveFronts))
	var waits []func() error
	for _, f := range serveFronts {
		wait, err := f.start(frontCtx, h)
		if err != nil {
			stop()
			shutdownServe(h, us, o.mount, false, stopFronts, waits, reaped, log)
			return fmt.Errorf("%s: %w", f.name, err)
		}
		waits = append(waits, wait)
		go func() {
			if err := wait(); err != nil {
				frontErr <- fmt.Errorf("%s: %w", f.name, err)
			}
		}()
	}

	where := ""
	if o.mount != "" {
		where = " at " + o.mount
	}
	for _, f := range serveFronts {
		if f.ready != nil {
			if d := f.ready(); d != "" {
				where += ", " + d
			}
		}
	}
	fmt.Fprintf(stdout, "mindmount: serving %s%s\n", o.root, where)
	sdNotify("READY=1")

	outside := false
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-hup:
			if err := h.Reload(); err != nil {
				log.Warn("re-read users", "err", err)
			} else {
				log.Info("users re-read", "users", len(h.Users()))
			}
		case <-gone:
			outside, done = true, true
			err = errUnmountedOutside(o.mount)
		case err = <-frontErr:
			done = true
		}
	}
	sdNotify("STOPPING=1")
	stop()
	if serr := shutdownServe(h, us, o.mount, outside, stopFronts, waits, reaped, log); serr != nil && err == nil {
		err = serr
	}
	if err == nil {
		log.Info("stopped; pending changes committed", "root", o.root)
	}
	return err
}

// serveMount mounts every user of h at mnt and keeps the mount in step
// with the host: users added or removed, and users loaded by any front.
func serveMount(h *host.Host, mnt string, opt enfs.UsersOptions) (*enfs.UsersServer, error) {
	opt.Root = h.Root()
	us, err := enfs.MountUsers(mnt, hostUsers{h}, opt)
	if err != nil {
		return nil, err
	}
	h.Subscribe(func(ev host.Event) {
		switch ev.Kind {
		case host.Added, host.Removed:
			us.Changed(ev.ID)
		case host.Loaded:
			us.Loaded(ev.ID)
		}
	})
	return us, nil
}

// shutdownServe unmounts (so nothing new arrives), stops the fronts and the
// reaper, then unloads every user, committing what is pending.
func shutdownServe(h *host.Host, us *enfs.UsersServer, mnt string, outside bool, stopFronts func(), waits []func() error, reaped <-chan struct{}, log *slog.Logger) error {
	var err error
	if us != nil && !outside {
		if uerr := us.Unmount(); uerr != nil {
			log.Warn("unmount", "mountpoint", mnt, "err", uerr)
			err = uerr
		}
	}
	stopFronts()
	for _, w := range waits {
		if werr := w(); werr != nil && !errors.Is(werr, context.Canceled) {
			log.Warn("front stopped", "err", werr)
		}
	}
	<-reaped
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if cerr := h.Close(ctx); cerr != nil {
		err = cerr
	}
	return err
}

// sdNotify tells systemd (Type=notify) about the daemon's state; nothing
// without NOTIFY_SOCKET.
func sdNotify(state string) {
	sock := os.Getenv("NOTIFY_SOCKET")
	if sock == "" {
		return
	}
	if sock[0] == '@' {
		sock = "\x00" + sock[1:] // abstract socket
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		return
	}
	defer c.Close()
	c.Write([]byte(state))
}

// hostUsers adapts the host to what the multi-user mount needs.
type hostUsers struct{ h *host.Host }

var _ enfs.Users = hostUsers{}

func (u hostUsers) List() []enfs.UserInfo {
	us := u.h.Users()
	out := make([]enfs.UserInfo, len(us))
	for i, x := range us {
		out[i] = enfs.UserInfo{ID: x.ID, UID: x.UID, GID: x.GID, Dir: x.Dir}
	}
	return out
}

func (u hostUsers) Lookup(id string) (enfs.UserInfo, bool) {
	x, err := u.h.Lookup(id)
	if err != nil {
		return enfs.UserInfo{}, false
	}
	return enfs.UserInfo{ID: x.ID, UID: x.UID, GID: x.GID, Dir: x.Dir}, true
}

func (u hostUsers) Acquire(ctx context.Context, id string) (*enfs.UserRepo, func(), error) {
	rt, release, err := u.h.Acquire(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	return &enfs.UserRepo{Graph: rt.Graph, Tracker: rt.Tracker, Repo: rt.Repo, Consolidate: rt.RequestConsolidation}, release, nil
}

func (u hostUsers) Status() []byte { return u.h.Status(modelQueue()) }

// modelShares gives every user its share of the one model: the daemon's
// fair pool (llm.Pool, see llmenv.go) bounds the calls to concurrency.
func modelShares(cfg host.RuntimeConfig, concurrency int) func(id string) llm.Provider {
	if cfg.Provider == nil {
		return nil
	}
	pool := newModelPool(cfg.Provider, concurrency)
	return func(id string) llm.Provider { return pool.For(id) }
}

// modelQueue describes the model pool for the status report.
func modelQueue() string { return modelPoolStatus() }
