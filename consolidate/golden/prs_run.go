package golden

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// PROptions tune RunPRs. Both funcs default to plain stand-ins, so the
// package runs alone; "mindmount eval" passes serve/github's own.
type PROptions struct {
	// Query builds a new pull request's recall query.
	Query func(title, body string, paths []string) string
	// Select keeps what the recall comment would show of the ranked hits.
	Select func([]recall.Hit) []recall.Hit
	// Provider is "ollama" (default) or "openai": which production client
	// talks to the scripted model.
	Provider string
}

// FactResult is what one fact of the history did.
type FactResult struct {
	Source, Slug string
	Want, Got    []string // slugs it had to retire, and retired
	Sibling      bool     // it retired a memory of its own source
}

// OK reports whether the fact retired exactly what it had to.
func (f FactResult) OK() bool { return slices.Equal(f.Want, f.Got) }

// QueryResult is one new pull request's recall.
type QueryResult struct {
	Query    PRQuery
	Shown    []string // slugs of what the comment would show, best first
	Stale    []string // superseded memories among the ranked hits (top 10)
	Ranked   int      // hits ranked (top 10)
	Found    int      // wanted memories shown
	Unwanted int      // shown memories not wanted
}

// PRResult is the outcome of RunPRs.
type PRResult struct {
	Facts   []FactResult
	Queries []QueryResult
	Extract int // extraction calls that carried the batch prompt
	Calls   int // extraction calls in all
}

// rankDepth is how deep staleness is checked: deeper than the comment.
const rankDepth = 10

// RunPRs ingests PRHistory, one batch per item, into a fresh repository
// under dir with the scripted model (PRDecide), then asks recall for each
// of PRQueries.
func RunPRs(ctx context.Context, dir string, opt PROptions) (PRResult, error) {
	var res PRResult
	opt = opt.defaults()
	files := map[string]string{".gitignore": "/transcripts/*\n", "user.md": "---\ndescription: The project\n---\n# Project\n",
		"character.md": "---\ndescription: The assistant\n---\n# Character\n"}
	r, err := seedRepo(ctx, dir, files, "")
	if err != nil {
		return res, err
	}
	os.Remove(filepath.Join(dir, memgraph.TranscriptsDir, "chat.jsonl"))
	g, err := memgraph.Scan(dir)
	if err != nil {
		return res, err
	}
	defer g.Close()
	srv, p, stop := scripted(opt.Provider)
	defer stop()
	srv.Handle(scriptPRs)
	provs := map[string]consolidate.Provenance{}
	c := consolidate.New(tracker.New(g, r, tracker.Config{Logger: discard}), p, consolidate.Config{Now: func() time.Time { return when }, Logger: discard,
		Provenance: func(rel string) (consolidate.Provenance, bool) { pv, ok := provs[rel]; return pv, ok }})
	for i, it := range PRHistory {
		rel := fmt.Sprintf("%s/github/%02d.md", memgraph.TranscriptsDir, i)
		provs[rel] = consolidate.Provenance{Source: it.Source, URL: "https://example.com/ledger/" + strings.ReplaceAll(it.Source, "#", "/")}
		before := activeSet(g)
		if err := writeTranscript(dir, rel, it); err != nil {
			return res, err
		}
		if _, err := c.Run(ctx); err != nil {
			return res, fmt.Errorf("%s: %w", it.Source, err)
		}
		res.Facts = append(res.Facts, judge(g, it, before)...)
	}
	for _, call := range srv.CallsOf(llmtest.KindExtract) {
		res.Calls++
		if isBatchPrompt(call.System) {
			res.Extract++
		}
	}
	for _, q := range PRQueries {
		res.Queries = append(res.Queries, ask(ctx, g, q, opt))
	}
	return res, nil
}

func (o PROptions) defaults() PROptions {
	if o.Query == nil {
		o.Query = func(title, body string, paths []string) string {
			return strings.Join(append([]string{title, body}, paths...), "\n")
		}
	}
	if o.Select == nil {
		o.Select = func(h []recall.Hit) []recall.Hit { return h[:min(3, len(h))] }
	}
	return o
}

// writeTranscript writes item it as a pull request's text in the inbox.
func writeTranscript(dir, rel string, it PRItem) error {
	text := fmt.Sprintf("# %s: %s\n\n", it.Source, it.Title)
	if len(it.Paths) > 0 {
		text += "Changed paths: " + strings.Join(it.Paths, ", ") + "\n"
	}
	text += "\n## Description\n\n" + it.Body + "\n"
	abs := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return err
	}
	return os.WriteFile(abs, []byte(text), 0o600)
}

// activeSet is the active memories of g, by path.
func activeSet(g *memgraph.Graph) map[string]bool {
	out := map[string]bool{}
	for _, m := range g.Memories(memgraph.KindUser) {
		if m.Active() {
			out[m.Path] = true
		}
	}
	return out
}

// judge compares what item it retired (memories active before, retired
// now, superseded by one of its facts) with what its facts had to.
func judge(g *memgraph.Graph, it PRItem, before map[string]bool) []FactResult {
	var out []FactResult
	for _, f := range it.Facts {
		fr := FactResult{Source: it.Source, Slug: f.Slug, Want: slices.Sorted(slices.Values(f.Retires))}
		for rel := range before {
			m := g.Get(rel)
			if m == nil || m.Active() || m.Front.SupersededBy != memgraph.UserDir+"/"+f.Slug {
				continue
			}
			fr.Got = append(fr.Got, strings.TrimSuffix(strings.TrimPrefix(rel, memgraph.UserDir+"/"), ".md"))
			fr.Sibling = fr.Sibling || consolidate.BatchOf(m.Front.Source) == it.Source
		}
		slices.Sort(fr.Got)
		out = append(out, fr)
	}
	return out
}

// ask runs one new pull request's recall.
func ask(ctx context.Context, g *memgraph.Graph, q PRQuery, opt PROptions) QueryResult {
	res := QueryResult{Query: q}
	hits := g.RecallContext(ctx, opt.Query(q.Title, q.Body, q.Paths), recall.Options{K: rankDepth})
	res.Ranked = len(hits)
	for _, h := range hits {
		slug := strings.TrimSuffix(filepath.Base(h.Path), ".md")
		if m := g.Get(h.Path); m == nil || !m.Active() || slices.Contains(q.Stale, slug) {
			res.Stale = append(res.Stale, slug)
		}
	}
	for _, h := range opt.Select(hits) {
		slug := strings.TrimSuffix(filepath.Base(h.Path), ".md")
		res.Shown = append(res.Shown, slug)
		if slices.Contains(q.Want, slug) {
			res.Found++
		} else {
			res.Unwanted++
		}
	}
	return res
}
