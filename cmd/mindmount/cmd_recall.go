package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/httpapi"
)

// recallCommand is "mindmount recall".
var recallCommand = newCommand(command{
	name:    "recall",
	usage:   `recall REPO "QUESTION" [-k N] [--kind user|character] [--all] [--json] [--no-wordnet] [--scope personal|TEAM|all]`,
	summary: "find the memories that answer a question, best first",
	help: `Ranks the memories of the repository REPO for a question in plain words,
for example: mindmount recall ~/memory "does the user have allergies?"

Matching is by keywords with English stemming ("allergies" finds
"allergic"), weighted so the title and description count more than the
fact and the episode, with a small bonus for memories used often. Only
active memories are returned; --all includes superseded, retracted and
contradicted ones, marked as such.

When "mindmount reindex REPO" has built vectors for the repository, the
question is also embedded (MINDMOUNT_LLM, OLLAMA_HOST, ... as for
consolidation) and both rankings are fused. If the model does not answer
within 2 seconds, keywords alone decide: recall never needs the network.

Output lists each memory's path, description and the sentence that
matches best. --json prints an array of objects with path (relative to
REPO), description, score, kind, status and snippet, best first.

When WordNet is installed (Debian, Ubuntu: apt install wordnet-base,
read from /usr/share/wordnet), recall also looks for the nouns WordNet
relates to each word of the question (synonyms, and more general and
more specific words: "drink" finds "coffee"), each weighted below the
question's own words; --no-wordnet looks for the question's own words
only.

While a daemon serves REPO (mindmount mount or watch), recall asks it
over the repository's control socket instead of reading every memory
again: the same ranking, faster. Without one it ranks in-process.

With teams attached, recall searches the personal repository and every
team, merging the rankings; a team's hits read shared/TEAM/PATH.
--scope personal searches the personal repository only, --scope TEAM
one team, --scope all (the default) everything.`,
}, runRecall)

// recallOptions are the flags of "mindmount recall".
type recallOptions struct {
	k     int
	kind  string
	all   bool
	asJS  bool
	noWN  bool
	scope string
}

func (o *recallOptions) AddFlags(fl *flag.FlagSet) {
	fl.IntVar(&o.k, "k", 10, "number of memories to return")
	fl.StringVar(&o.kind, "kind", "", "only memories of `KIND`: user or character")
	fl.BoolVar(&o.all, "all", false, "include retired (superseded, retracted, contradicted) memories")
	fl.BoolVar(&o.asJS, "json", false, "print JSON")
	fl.BoolVar(&o.noWN, "no-wordnet", false, "look for the question's own words only, not those WordNet relates to them")
	fl.StringVar(&o.scope, "scope", memgraph.ScopeAll, "where to search: personal, a team's name, or all")
}

// runRecall ranks memories for a query.
func runRecall(ctx context.Context, o *recallOptions, args []string) error {
	if len(args) < 2 {
		return errUsage
	}
	switch o.kind {
	case "", string(memgraph.KindUser), string(memgraph.KindCharacter):
	default:
		return fmt.Errorf("--kind %q: want user or character", o.kind)
	}
	if o.k <= 0 {
		return fmt.Errorf("-k %d: want a positive number", o.k)
	}
	q := strings.Join(args[1:], " ")
	if err := requireMindmountRepo(args[0]); err != nil {
		return err
	}
	t0 := time.Now()
	res, ok, err := recallThroughDaemon(ctx, args[0], control.Question{Q: q, K: o.k, Kind: o.kind, All: o.all, Literal: o.noWN, Scope: o.scope})
	if err != nil {
		return fmt.Errorf("the daemon serving %s: %w", args[0], err)
	}
	if ok {
		slog.Debug("recall: answered by the daemon", "wait", time.Since(t0).Round(time.Microsecond))
		return printHits(q, res.Hits, res.Scoped, o.asJS)
	}
	g, err := scanForOutput(args[0])
	if err != nil {
		return err
	}
	closeTeams, err := attachTeams(g)
	if err != nil {
		return err
	}
	defer closeTeams()
	tScan := time.Since(t0)
	useCachedVectors(g)
	if o.noWN {
		g.RecallIndex().SetExpander(nil)
	}
	t1 := time.Now()
	hits, err := g.RecallScoped(ctx, q, recall.Options{K: o.k, Kind: o.kind, All: o.all}, o.scope)
	if err != nil {
		return err
	}
	slog.Debug("recall: where the time went", "memories", g.RecallIndex().Len(),
		"open_scan_index", tScan.Round(time.Microsecond), "query", time.Since(t1).Round(time.Microsecond))
	return printHits(q, hits, len(g.Scopes()) > 0, o.asJS)
}

// printHits prints hits as text, or as JSON when asJS (scoped: teams were
// searched, a hit's path names its scope).
func printHits(q string, hits []recall.Hit, scoped, asJS bool) error {
	if asJS {
		return writeHitsJSON(hits, scoped)
	}
	writeHits(q, hits)
	return nil
}

// useCachedVectors turns on vector recall when a vector cache exists for
// the configured model. Without one, recall stays keyword-only and never
// touches the network; `mindmount reindex` builds the cache.
func useCachedVectors(g *memgraph.Graph) {
	dir := filepath.Join(g.Root(), filepath.FromSlash(memgraph.VectorCacheDir))
	if _, err := os.Stat(dir); err != nil {
		return
	}
	p, err := providerFromEnv()
	if err != nil {
		return
	}
	v := recall.NewVectors(p, embedModel(p), dir)
	if err := g.RecallIndex().SetVectors(v, false); err != nil {
		return
	}
	if n, _ := g.RecallIndex().VectorCount(); n == 0 {
		g.RecallIndex().Close()
	}
}

func writeHitsJSON(hits []recall.Hit, scoped bool) error {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if scoped {
		return enc.Encode(httpapi.ScopedHits(hits))
	}
	return enc.Encode(httpapi.Hits(hits))
}

func writeHits(q string, hits []recall.Hit) {
	if len(hits) == 0 {
		fmt.Fprintf(stdout, "no memory matches %q\n", q)
		return
	}
	for i, h := range hits {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		desc := memgraph.SafeLine(h.Description)
		fmt.Fprintf(stdout, "%s%s\n", memgraph.SafeLine(h.Path), memgraph.RetiredTag(h.Status))
		fmt.Fprintf(stdout, "  %s\n", desc)
		if s := memgraph.SafeLine(h.Snippet); s != "" && s != desc {
			fmt.Fprintf(stdout, "  > %s\n", s)
		}
	}
}
