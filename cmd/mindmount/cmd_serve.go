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
	"strconv"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/fs/mount"
	"github.com/mindmount/mindmount/serve/host"
)

// serveFront is one way mindmount serve exposes its users besides the mount
// (HTTP, MCP). Other files add theirs to serveFronts from init().
type serveFront struct {
	name  string
	flags func(fl *flag.FlagSet)
	// start runs the front until ctx ends; it returns once ready (or failed).
	start func(ctx context.Context, ws *host.Workers) (wait func() error, err error)
	// set reports whether the front's flags ask for it (--http ADDR).
	set func() bool
	// ready, when set, describes the started front for the readiness
	// line ("http on 127.0.0.1:8080"); "" adds nothing.
	ready func() string
}

var serveFronts []*serveFront

// anyFrontSet reports whether the flags ask for a front.
func anyFrontSet() bool {
	for _, f := range serveFronts {
		if f.set != nil && f.set() {
			return true
		}
	}
	return false
}

// serveOptions are mindmount serve's flags.
type serveOptions struct {
	daemon         daemonFlags
	root, mount    string
	unloadAfter    time.Duration
	llmConcurrency int
	llmBackground  int
	userMemory     uint64
	cgroups        bool
	debug          bool
	cluster        clusterOptions
}

func (o *serveOptions) AddFlags(fl *flag.FlagSet) {
	o.daemon.AddFlags(fl)
	fl.StringVar(&o.root, "root", "", "the serve `ROOT`: ROOT/users.json and one repository per user under ROOT/users/<id>")
	fl.StringVar(&o.mount, "mount", "", "mount every user's memory at `MNT`/<id> (FUSE; needs root)")
	fl.DurationVar(&o.unloadAfter, "unload-after", 10*time.Minute, "stop a user's worker idle this long, committing what is pending first (users without a mount)")
	fl.IntVar(&o.llmConcurrency, "llm-concurrency", 0, "chat model calls running at once, shared fairly by all users (0: the provider's own: Ollama's OLLAMA_NUM_PARALLEL or 1, a hosted API 8)")
	fl.IntVar(&o.llmBackground, "llm-background", 0, "consolidation model calls running at once, beside the chats' (0: Ollama 1, a hosted API 2)")
	fl.Uint64Var(&o.userMemory, "user-memory", defaultUserMemory, "bound each user's worker to this many `BYTES` of memory (RLIMIT_DATA; 0: no bound)")
	fl.BoolVar(&o.cgroups, "cgroups", true, "confine each user's worker and the programs it runs to a cgroup of its own where the host allows it: memory twice --user-memory, "+strconv.Itoa(cgroupProcs)+" processes, one core")
	fl.BoolVar(&o.debug, "debug", false, "log every FUSE request")
	o.cluster.AddFlags(fl)
	for _, f := range serveFronts {
		if f.flags != nil {
			f.flags(fl)
		}
	}
}

// clusterPushDelay is the push delay of a cluster's nodes (--push-delay
// unset): the loss window when a node dies without --sync-replication.
const clusterPushDelay = 2 * time.Second

// pushDelay is the push delay serve hands its workers: the one asked for,
// else in a cluster clusterPushDelay (a node that dies loses what it
// committed and has not pushed), else 0, the sync loop's own 5 s.
func pushDelay(cluster bool, asked time.Duration) time.Duration {
	if asked == 0 && cluster {
		return clusterPushDelay
	}
	return asked
}

// cgroupProcs bounds the processes and threads of a worker's cgroup.
const cgroupProcs = 1024

// cgroupBounds are the bounds of each worker's cgroup (nil: --cgroups=false).
// The memory bound covers the worker and the git it runs, so it is twice
// the worker's own; a binary built with -race needs several times the
// memory and gets none, as it gets no RLIMIT_DATA.
func (o *serveOptions) cgroupBounds() *host.Cgroups {
	if !o.cgroups {
		return nil
	}
	c := &host.Cgroups{Root: "/sys/fs/cgroup", Name: "mindmount", Pids: cgroupProcs, CPU: 1}
	if o.userMemory > 0 && !raceBuild {
		c.Memory = int64(2 * o.userMemory)
	}
	return c
}

// defaultUserMemory bounds a worker's writable memory (RLIMIT_DATA: heap
// and stacks, not the address space Go only reserves); the worker's Go heap
// is held to half of it, so the collector works long before the bound.
const defaultUserMemory = 512 << 20

// serveCommand is "mindmount serve".
var serveCommand = newCommand(command{
	name:    "serve",
	usage:   "serve --root ROOT [--mount MNT] [--http ADDR] [--unload-after 10m] [--llm-concurrency N]",
	summary: "serve every user's memory from one daemon (per-user mounts and workers, fronts)",
	help: `Serves every user registered under ROOT (mindmount users add): ROOT/users/<id>
is an ordinary mindmount repository, usable alone with mindmount mount when no
daemon serves it. With --mount, MNT/<id>/ shows exactly what mindmount mount
shows for that repository: the files, user_memory.md, character_memory.md,
CONTEXT.md, .mindmount/status, .mindmount/search/QUERY and .mindmount/consolidate.

Privilege separation: the daemon runs as root only to mount, listen, read
the user registry and tokens, check credentials and hold the model's key.
Everything that touches a user's repository — reads, writes, git,
consolidation, sync — runs in that user's worker process ("mindmount
worker") with the user's uid and gid: the kernel, not the daemon's care,
keeps it within the user's own rights. One worker is kept started ahead,
holding nothing of anyone's, and drops to the next user's uid and gid for
good before it opens that user's repository. Every file in the
repository belongs to the user, who can use plain git on it.

Isolation: MNT/<id> is its own mount, served by the user's worker; a
process whose uid is neither root nor the user's gets EACCES there (from
the kernel, the top being the user's and 0700, and from the worker). MNT
itself is root's, 0711: others cannot list who the users are.

Bind-mount MNT/<id> into a sandbox or container to give an agent its
memory (see the README, "Many users and containers").

With --mount each user's worker starts with the daemon and serves the
mount for its life; without, a worker starts at the user's first HTTP or
MCP request and stops after --unload-after without use, committing what
is pending first. A worker that dies takes its mount with it at once
(what waited on it gets an error, never a hang) and is started again after
a backoff; one that ends the same way three times in a row is held back
for 5 minutes, and mindmount status --root says why. SIGHUP re-reads
the user list: added users are mounted, removed ones stopped and moved
aside, and a user whose uid or gid changed gets a new worker and a new
mount at once, the old uid refused from then on. All users share
--llm-concurrency chat model calls (the provider's own concurrency by
default) and --llm-background consolidation calls beside them, each queued
fairly, through the daemon: a consolidation never queues a chat.

The line "mindmount: serving ROOT" on standard output (and READY=1 to
systemd's NOTIFY_SOCKET) says the daemon is ready. SIGINT or SIGTERM
stops every worker (each commits what is pending, within 3 seconds, or is
killed), unmounts and exits 0, within 5 seconds.
Only one daemon serves a ROOT, and while it runs, mount, watch and mcp
refuse its users' repositories.

Example:

    mkdir -p /srv/mindmount /mnt/mindmount
    mindmount users add /srv/mindmount alice --uid 1001 --gid 1001
    mindmount serve --root /srv/mindmount --mount /mnt/mindmount`,
}, runServeCommand)

// runServeCommand checks serve's flags and runs the daemon.
func runServeCommand(_ context.Context, o *serveOptions, args []string) error {
	if len(args) != 0 || o.root == "" {
		fmt.Fprintln(stderr, "mindmount serve: --root ROOT is required (see mindmount serve --help)")
		return exitError{2}
	}
	if o.mount == "" && !anyFrontSet() {
		fmt.Fprintln(stderr, "mindmount serve: say what to serve: --mount MNT (each user's memory as files), --http ADDR (the HTTP API and MCP), or both")
		return exitError{2}
	}
	return runServe(o, slog.Default())
}

// runServe runs the daemon until SIGINT/SIGTERM (nil: everything pending
// committed) or until a front fails.
func runServe(o *serveOptions, log *slog.Logger) error {
	ws, err := o.workers(log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	leave, err := o.joinCluster(ctx, ws, log)
	if err != nil {
		ws.Close(context.Background())
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	reaped := make(chan struct{})
	go func() {
		defer close(reaped)
		ws.Run(ctx)
	}()

	fr, err := startFronts(ctx, ws)
	defer fr.stop()
	if err != nil {
		stop()
		shutdownServe(ws, fr, reaped, log)
		return err
	}
	fmt.Fprintf(stdout, "mindmount: serving %s%s\n", o.root, o.where())
	sdNotify("READY=1")

	err = serveUntilDone(ctx, hup, ws, fr.errs, log)
	sdNotify("STOPPING=1")
	stop()
	leave()
	if serr := shutdownServe(ws, fr, reaped, log); serr != nil && err == nil {
		err = serr
	}
	if err == nil {
		log.Info("stopped; pending changes committed", "root", o.root)
	}
	return err
}

// workers checks what --mount needs and makes the users' workers: this
// program as "mindmount worker", the daemon's flags, and the model pool
// all users share.
func (o *serveOptions) workers(log *slog.Logger) (*host.Workers, error) {
	o.daemon.sync.PushDelay = pushDelay(o.cluster.endpoints != "", o.daemon.sync.PushDelay)
	cfg := o.daemon.runtimeConfig(false, log)
	if o.mount != "" {
		if os.Geteuid() != 0 {
			return nil, fmt.Errorf("--mount %s: mounting every user's memory needs root (each user's mount is made by the daemon and served by the user's worker)", o.mount)
		}
		if err := checkServeMountpoint(o.mount); err != nil {
			return nil, err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var pool *llm.Pool
	if cfg.Provider != nil {
		pool = llm.NewPool(cfg.Provider, llm.PoolConfig{Concurrency: o.chatConcurrency(cfg.Provider), Background: o.llmBackground})
	}
	args := append(o.daemon.args(), "--github-api="+serveGitHubAPI, fmt.Sprintf("--max-body=%d", serveMaxBody))
	if o.debug {
		args = append(args, "--debug")
	}
	return host.NewWorkers(host.WorkersConfig{
		Root:  o.root,
		Mount: o.mount,
		// In a cluster a user is mounted only on the node that holds it.
		MountOnDemand: o.cluster.endpoints != "",
		Exe:           exe,
		Args:          args,
		Pool:          pool,
		Memory:        o.userMemory,
		Cgroups:       o.cgroupBounds(),
		UnloadAfter:   o.unloadAfter,
		Logger:        log,
	})
}

// runningFronts are the started fronts: stop ends them, waits wait for
// each, errs carries the first failure of a running one.
type runningFronts struct {
	stop  func()
	waits []func() error
	errs  chan error
}

// startFronts starts every front (serveFronts), to run until ctx ends or
// stop is called; an error names the front that failed to start.
func startFronts(ctx context.Context, ws *host.Workers) (*runningFronts, error) {
	frontCtx, stop := context.WithCancel(ctx)
	fr := &runningFronts{stop: stop, errs: make(chan error, len(serveFronts))}
	for _, f := range serveFronts {
		wait, err := f.start(frontCtx, ws)
		if err != nil {
			return fr, fmt.Errorf("%s: %w", f.name, err)
		}
		fr.waits = append(fr.waits, wait)
		go func() {
			if err := wait(); err != nil {
				fr.errs <- fmt.Errorf("%s: %w", f.name, err)
			}
		}()
	}
	return fr, nil
}

// where completes the readiness line: the mount and each front's address.
func (o *serveOptions) where() string {
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
	return where
}

// serveUntilDone waits for a signal to stop (nil) or a front's failure,
// re-reading the users on SIGHUP. The re-read (which mounts and starts
// added users) runs beside the wait, one at a time, so SIGTERM is heard
// whatever a start does.
func serveUntilDone(ctx context.Context, hup <-chan os.Signal, ws *host.Workers, frontErr <-chan error, log *slog.Logger) error {
	reloading := make(chan struct{}, 1)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-hup:
			select {
			case reloading <- struct{}{}:
			default:
				continue // a re-read is under way; it reads the latest file
			}
			go func() {
				defer func() { <-reloading }()
				if err := ws.Reload(); err != nil {
					log.Warn("re-read users", "err", err)
				} else {
					log.Info("users re-read", "users", len(ws.Users()))
				}
			}()
		case err := <-frontErr:
			return err
		}
	}
}

// checkServeMountpoint checks MNT before anything starts and makes it
// root's, 0711: users reach MNT/<id> knowing their id, and cannot list the
// others.
func checkServeMountpoint(mnt string) error {
	fi, err := os.Stat(mnt)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("mountpoint %s does not exist: create it with mkdir -p %s", mnt, mnt)
	case err != nil:
		return fmt.Errorf("mountpoint %s: %w", mnt, err)
	case !fi.IsDir():
		return fmt.Errorf("mountpoint %s is not a directory", mnt)
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("%w: mounting needs FUSE (modprobe fuse; in a container --device /dev/fuse)", mount.ErrNoFUSE)
	}
	return os.Chmod(mnt, 0o711)
}

// shutdownGrace bounds serve's whole shutdown: SIGTERM ends the daemon
// within 5 s, whatever a worker or a client does.
const shutdownGrace = 4 * time.Second

// shutdownServe stops the fronts (nothing new arrives) and the reaper, and
// every worker, each committing what is pending, and unmounts; within
// shutdownGrace, after which what is left is killed (the workers) or left
// to the process's exit (a front's open streams).
func shutdownServe(ws *host.Workers, fr *runningFronts, reaped <-chan struct{}, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	fr.stop()
	fronts := make(chan struct{})
	go func() {
		defer close(fronts)
		for _, w := range fr.waits {
			if werr := w(); werr != nil && !errors.Is(werr, context.Canceled) {
				log.Warn("front stopped", "err", werr)
			}
		}
	}()
	closed := make(chan error, 1)
	go func() {
		select {
		case <-reaped:
		case <-ctx.Done():
		}
		closed <- ws.Close(ctx)
	}()
	select {
	case <-fronts:
	case <-ctx.Done():
		log.Warn("fronts still busy at shutdown; their connections end with the daemon")
	}
	return <-closed
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

// chatConcurrency is --llm-concurrency, or for a local Ollama what its
// server runs at once: OLLAMA_NUM_PARALLEL when this environment sets it
// (the same variable Ollama reads), else the pool's provider default.
func (o *serveOptions) chatConcurrency(p llm.Provider) int {
	if o.llmConcurrency > 0 || p.Name() != "ollama" {
		return o.llmConcurrency
	}
	n, err := strconv.Atoi(os.Getenv("OLLAMA_NUM_PARALLEL"))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
