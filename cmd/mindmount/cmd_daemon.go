package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/remote"
)

// daemonFlags are the flags every daemon shares (mount, watch, mcp, ui,
// serve, worker), and all of mcp's and watch's options: the tracker's
// timing and consolidation's triggers.
type daemonFlags struct {
	debounce, maxWait, rescan, idle time.Duration
	every, indexTokens              int
	consolidate                     bool
	sync                            remote.Timing
}

func (d *daemonFlags) AddFlags(fl *flag.FlagSet) {
	fl.DurationVar(&d.debounce, "debounce", time.Second, "quiet time before a burst of changes is committed")
	fl.DurationVar(&d.maxWait, "max-wait", 10*time.Second, "longest a change waits while writes keep coming")
	fl.DurationVar(&d.rescan, "rescan", 30*time.Second, "interval of the safety-net rescan for changes the file watcher missed (0 = off)")
	fl.BoolVar(&d.consolidate, "consolidate", true, "consolidate transcripts into memories (needs a model)")
	fl.DurationVar(&d.idle, "idle", 10*time.Minute, "consolidate when transcripts were quiet this long")
	fl.IntVar(&d.every, "every", 30, "consolidate when this many new user messages arrived")
	fl.DurationVar(&d.sync.PushDelay, "push-delay", 0, "with a git remote: quiet time after a commit before it is pushed (0: 5s, and 2s under serve --cluster)")
	fl.DurationVar(&d.sync.FetchEvery, "fetch-every", 0, "with a git remote: how often others' changes are fetched and merged (0: 5m)")
	fl.IntVar(&d.indexTokens, "index-tokens", 0, "budget of user_memory.md and character_memory.md in estimated `TOKENS` (default: .mindmount/settings, else 2000)")
}

// args are the flags that give a worker (mindmount serve's) the same
// timing and triggers.
func (d *daemonFlags) args() []string {
	return []string{
		"--debounce=" + d.debounce.String(), "--max-wait=" + d.maxWait.String(), "--rescan=" + d.rescan.String(),
		"--consolidate=" + strconv.FormatBool(d.consolidate), "--idle=" + d.idle.String(),
		"--every=" + strconv.Itoa(d.every), "--index-tokens=" + strconv.Itoa(d.indexTokens),
		"--push-delay=" + d.sync.PushDelay.String(), "--fetch-every=" + d.sync.FetchEvery.String(),
	}
}

// runtimeConfig is the configuration of one served repository. The model
// comes from the environment; without one consolidation still runs and the
// status file says it is waiting for a model. writeSynthesized is watch
// mode: the indexes, context and status are written as real files.
func (d *daemonFlags) runtimeConfig(writeSynthesized bool, log *slog.Logger) host.RuntimeConfig {
	cfg := d.baseConfig(writeSynthesized, log)
	if d.consolidate {
		p, err := providerFromEnv()
		if err != nil {
			log.Warn("consolidation has no model; running without it", "err", err, "help", llm.NoModelHelp)
		} else {
			cfg.Provider = p
		}
	}
	return cfg
}

// baseConfig is runtimeConfig without a model.
func (d *daemonFlags) baseConfig(writeSynthesized bool, log *slog.Logger) host.RuntimeConfig {
	cfg := host.RuntimeConfig{
		Debounce:         d.debounce,
		MaxWait:          d.maxWait,
		Rescan:           d.rescan,
		WriteSynthesized: writeSynthesized,
		Consolidate:      d.consolidate,
		Idle:             d.idle,
		Every:            d.every,
		IndexTokens:      d.indexTokens,
		Logger:           log,
		// cmd_sync.go: push after commits, fetch periodically
		Services: []host.Service{func(ctx context.Context, rt *host.Runtime) { syncService(ctx, rt, d.sync) }},
	}
	return cfg
}

// unmountedOutside returns a channel closed when the FUSE server stops
// serving: after our own unmount, or when someone ran fusermount3 -u (or
// umount) on the mountpoint. A daemon that selects on it before unmounting
// itself learns of the second case instead of running on silently.
func unmountedOutside(srv interface{ Wait() }) <-chan struct{} {
	gone := make(chan struct{})
	go func() {
		srv.Wait()
		close(gone)
	}()
	return gone
}

// errUnmountedOutside is the daemon's exit error when its mount was taken
// away: non-zero, so systemd's Restart=on-failure brings it back.
func errUnmountedOutside(mnt string) error {
	return fmt.Errorf("%s was unmounted from outside the daemon (fusermount3 -u?); pending changes were committed; start the daemon again to serve it", mnt)
}

// A front is how a daemon serves its running repository: the mount, MCP
// over stdio, or nothing beside the runtime (watch mode). start begins
// serving rt until ctx ends; it prints the ready line, and returns a
// channel on which the front reports that it ended by itself (nil: it
// never does) and stop, which ends it before the pending changes are
// committed (ended: it had ended by itself).
type front func(ctx context.Context, rt *host.Runtime) (ended <-chan error, stop func(ended bool) error, err error)

// runDaemon is every single-repository daemon (mount, watch, mcp): it
// opens and starts the runtime of dir, starts the front, and waits for
// SIGINT or SIGTERM, the runtime's failure or the front's own end; then it
// stops the front, so nothing new arrives, and commits everything left
// (closeRuntime). A signal or a clean end of the front is a nil error.
func runDaemon(dir string, cfg host.RuntimeConfig, start front) error {
	if err := host.CheckNotServed(dir); err != nil {
		return err
	}
	return serveRuntime(dir, "", cfg, func(ctx context.Context, rt *host.Runtime) (<-chan error, func(bool) error, error) {
		openDoors(rt, cfg.Logger) // mcp and ui beside it attach (cmd_doors.go)
		return start(ctx, rt)
	})
}

// serveRuntime is runDaemon without the check that no serve owns dir: a
// serve worker is that owner. id names the served user ("" for none).
func serveRuntime(dir, id string, cfg host.RuntimeConfig, start front) error {
	cfg.User = id
	rt, err := host.OpenRuntime(dir, cfg)
	if err != nil {
		return err
	}
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	if err := rt.Start(ctx); err != nil {
		closeRuntime(rt)
		return err
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended, stop, err := start(fctx, rt)
	if err != nil {
		closeRuntime(rt)
		return err
	}
	byItself := false
	select {
	case <-ctx.Done(): // SIGINT/SIGTERM
	case <-rt.Done():
		err = rt.Err()
	case err = <-ended:
		byItself = true
	}
	cancel()
	var serr error
	if stop != nil {
		serr = stop(byItself)
	}
	if cerr := closeRuntime(rt); cerr != nil && err == nil {
		err = cerr
	}
	if err == nil && serr != nil {
		err = serr
	}
	return err
}

// closeRuntime stops rt and commits what is pending, within 30 seconds.
func closeRuntime(rt *host.Runtime) error {
	fctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return rt.Close(fctx)
}
