package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	"github.com/engram-dev/engram/consolidate"
	"github.com/engram-dev/engram/memgraph"
	"github.com/engram-dev/engram/memgraph/gitrepo"
	"github.com/engram-dev/engram/memgraph/tracker"
)

// dreamer is the consolidator of a running daemon (mount or watch): it hears
// of transcript changes through the tracker, reports through .engram/status,
// and runs its triggers (idle, count, request) from start until ctx ends.
type dreamer struct {
	c    *consolidate.Consolidator
	done chan struct{}
}

// newDreamer wires a consolidator into tr. Without a model it still runs:
// the status file then says consolidation is waiting for one.
func newDreamer(g *memgraph.Graph, r *gitrepo.Repo, tr *tracker.Tracker, idle time.Duration, every int, log *slog.Logger) *dreamer {
	p, err := consolidate.FromEnv()
	if err != nil {
		log.Warn("consolidation has no model; running without it", "err", err)
		p = nil
	}
	c := consolidate.New(g, r, p, consolidate.Config{Idle: idle, Every: every, Logger: log})
	tr.SetExtraStatus(c.Status)
	tr.Subscribe(func(paths []string) {
		for _, p := range paths {
			c.Notify(p)
		}
	})
	return &dreamer{c: c}
}

// request asks for a run now (the .engram/consolidate control file).
func (d *dreamer) request() { d.c.Request() }

func (d *dreamer) start(ctx context.Context) {
	d.done = make(chan struct{})
	go func() {
		defer close(d.done)
		d.c.Loop(ctx)
	}()
}

// wait returns once the loop started by start has ended; at once when it
// never started or d is nil (consolidation turned off).
func (d *dreamer) wait() {
	if d != nil && d.done != nil {
		<-d.done
	}
}

// daemonFlags are the flags mount and watch share: the tracker's timing and
// consolidation's triggers.
type daemonFlags struct {
	debounce, maxWait, rescan, idle time.Duration
	every                           int
	consolidate                     bool
}

func (d *daemonFlags) register(fl *flag.FlagSet) {
	fl.DurationVar(&d.debounce, "debounce", time.Second, "quiet time before a burst of changes is committed")
	fl.DurationVar(&d.maxWait, "max-wait", 10*time.Second, "longest a change waits while writes keep coming")
	fl.DurationVar(&d.rescan, "rescan", 30*time.Second, "interval of the safety-net rescan for changes the file watcher missed (0 = off)")
	fl.BoolVar(&d.consolidate, "consolidate", true, "consolidate transcripts into memories (needs a model)")
	fl.DurationVar(&d.idle, "idle", 10*time.Minute, "consolidate when transcripts were quiet this long")
	fl.IntVar(&d.every, "every", 30, "consolidate when this many new user messages arrived")
}

// start opens the engram repository at dir and builds its tracker and, when
// asked for, its consolidator (not yet running). writeSynthesized is watch
// mode: the indexes, context and status are written as real files.
func (d *daemonFlags) start(dir string, writeSynthesized bool, log *slog.Logger) (*gitrepo.Repo, *memgraph.Graph, *tracker.Tracker, *dreamer, error) {
	r, g, err := openEngramRepo(dir)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	tr := tracker.New(g, r, tracker.Config{
		Debounce:         d.debounce,
		MaxWait:          d.maxWait,
		Rescan:           d.rescan,
		WriteSynthesized: writeSynthesized,
		Logger:           log,
	})
	var dr *dreamer
	if d.consolidate {
		dr = newDreamer(g, r, tr, d.idle, d.every, log)
	}
	return r, g, tr, dr, nil
}
