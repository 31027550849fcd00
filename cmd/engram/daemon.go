package main

import (
	"flag"
	"fmt"
	"log/slog"
	"time"

	"github.com/engram-dev/engram/cmd/engram/host"
)

// daemonFlags are the flags mount, watch and serve share: the tracker's
// timing and consolidation's triggers.
type daemonFlags struct {
	debounce, maxWait, rescan, idle time.Duration
	every, indexTokens              int
	consolidate                     bool
}

func (d *daemonFlags) register(fl *flag.FlagSet) {
	fl.DurationVar(&d.debounce, "debounce", time.Second, "quiet time before a burst of changes is committed")
	fl.DurationVar(&d.maxWait, "max-wait", 10*time.Second, "longest a change waits while writes keep coming")
	fl.DurationVar(&d.rescan, "rescan", 30*time.Second, "interval of the safety-net rescan for changes the file watcher missed (0 = off)")
	fl.BoolVar(&d.consolidate, "consolidate", true, "consolidate transcripts into memories (needs a model)")
	fl.DurationVar(&d.idle, "idle", 10*time.Minute, "consolidate when transcripts were quiet this long")
	fl.IntVar(&d.every, "every", 30, "consolidate when this many new user messages arrived")
	fl.IntVar(&d.indexTokens, "index-tokens", 0, "budget of user_memory.md and character_memory.md in estimated `TOKENS` (default: .engram/settings, else 2000)")
}

// runtimeConfig is the configuration of one served repository. The model
// comes from the environment; without one consolidation still runs and the
// status file says it is waiting for a model. writeSynthesized is watch
// mode: the indexes, context and status are written as real files.
func (d *daemonFlags) runtimeConfig(writeSynthesized bool, log *slog.Logger) host.RuntimeConfig {
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
		Services:         []host.Service{syncService}, // sync.go: push after commits, fetch periodically
	}
	if d.consolidate {
		p, err := providerFromEnv()
		if err != nil {
			log.Warn("consolidation has no model; running without it", "err", err)
		} else {
			cfg.Provider = p
		}
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
