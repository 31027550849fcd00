package github

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/hooks"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// open opens the memory clone dir for writing: no daemon may serve it
// meanwhile (it would be a second writer).
func open(dir string, p llm.Provider, log *slog.Logger, prov func(string) (consolidate.Provenance, bool)) (*consolidate.Consolidator, *gitrepo.Repo, func(), error) {
	r, err := gitrepo.Open(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	unlock, err := r.LockDaemon()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: stop the daemon serving it first: %w", dir, err)
	}
	g, err := tracker.ScanServed(r.Dir())
	if err != nil {
		unlock()
		return nil, nil, nil, err
	}
	c := consolidate.New(tracker.New(g, r, tracker.Config{Logger: log}), p,
		consolidate.Config{Logger: log, MergeFile: hooks.DreamMerger, Provenance: prov})
	return c, r, unlock, nil
}

// Ingest consolidates it into the memory clone dir as one batch with p:
// its text is written to dir's inbox (TranscriptPath) and the run labels
// it with its provenance. Ingesting an item again finds it consumed and
// proposes nothing.
func Ingest(ctx context.Context, dir string, it Item, p llm.Provider, log *slog.Logger) (consolidate.Report, error) {
	rel := it.TranscriptPath()
	prov := it.Provenance()
	c, _, done, err := open(dir, p, log, func(t string) (consolidate.Provenance, bool) {
		if t == rel {
			return prov, true
		}
		return ProvenanceOf(t)
	})
	if err != nil {
		return consolidate.Report{}, err
	}
	defer done()
	if err := writeInbox(dir, rel, it.Transcript()); err != nil {
		return consolidate.Report{}, err
	}
	return c.Run(ctx)
}

// writeInbox writes data at rel beneath dir, never through a link out of
// it; the same bytes already there are left alone.
func writeInbox(dir, rel string, data []byte) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.MkdirAll(filepath.Dir(rel), 0o700); err != nil {
		return err
	}
	if old, err := root.ReadFile(rel); err == nil && string(old) == string(data) {
		return nil
	}
	return root.WriteFile(rel, data, 0o600)
}

// Propose settles the waiting dreams of the memory clone dir with the
// hosting service (Proposal.Run). The clone holds the project's dream
// branches as Clone fetched them: fetching again here could replace a
// dream made since by an older one of the same number.
func Propose(ctx context.Context, dir string, cl *Client, log *slog.Logger) (Outcome, error) {
	c, r, done, err := open(dir, nil, log, nil)
	if err != nil {
		return Outcome{}, err
	}
	defer done()
	dreams, err := c.Dreams()
	if err != nil {
		return Outcome{}, err
	}
	p := &Proposal{Client: cl, Dir: dir,
		Reject: func(ctx context.Context, n int, reason string) error {
			_, err := c.Reject(ctx, n, reason)
			return err
		},
		Read: func(commit, rel string) []byte {
			b, ok, err := r.ReadAt(commit, rel)
			if !ok || err != nil {
				return nil
			}
			return b
		}}
	return p.Run(ctx, dreams)
}

// Recall is the recall comment for it over g's active memories: "" when
// nothing scores at least min.
func Recall(ctx context.Context, g *memgraph.Graph, it Item, min float64, k int, l Links) (string, []recall.Hit) {
	hits := Relevant(g.RecallContext(ctx, Query(it), recall.Options{K: k * 3}), min, k)
	if len(hits) == 0 {
		return "", nil
	}
	sources := map[string]string{}
	for _, h := range hits {
		if m := g.Get(h.Path); m != nil {
			sources[h.Path] = m.Front.Source
		}
	}
	return Comment(hits, sources, l), hits
}
