package main

import (
	"context"
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
