package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/memgraph/recall"
	"github.com/mindmount/mindmount/memgraph/recall/golden"
)

// evalCommand is "mindmount eval".
var evalCommand = newCommand(command{
	name:    "eval",
	usage:   "eval [--golden DIR] [-n 10000] [--reps 20] [--vectors | --fake-vectors] [--no-wordnet] [-v]",
	summary: "measure recall quality and speed on the golden set",
	help: `Runs the offline evaluation of recall. The golden set (built in; its
source is memgraph/recall/golden/set) holds memories in the real file
format, some of them retired, and questions with the memory that answers
each. It prints recall@1, recall@3 and MRR for the golden set alone and
inside a repository grown to -n memories with deterministic synthetic
distractors, the number of retired memories returned (must be 0), and
the p50/p95 query latency at that size.

It exits 1 when a retired memory is returned or the quality goals are
missed (recall@1 >= 0.85, recall@3 >= 0.90 on the golden set), and marks
each missed goal with MISSED:. -v lists the questions whose answer was
not ranked first.

It then plays consolidation's golden scenarios and the pull-request
golden set (consolidate/golden: a project's merged pull requests and
issues ingested one batch at a time, then recall as "mindmount github
recall" comments on new pull requests) with a scripted model, and prints
recall@3, precision@3, the staleness rate (goal: 0) and the conflict
detection accuracy.

"mindmount eval locomo PATH" measures recall on the LoCoMo benchmark
instead (see "mindmount help eval locomo").

--vectors also embeds the golden set with the model configured for
consolidation (MINDMOUNT_LLM, MINDMOUNT_EMBED_MODEL, OLLAMA_HOST, ...) and
prints the quality of the fused keyword+vector ranking recall uses after
"mindmount reindex". --fake-vectors does the same offline with the test
suite's fake embedder, a hashed bag of words: it needs no model and
shows the plumbing and its cost, not what a real model adds (it knows
no synonyms).`,
	subs: []*command{evalLocomoCommand},
}, runEval)

// evalOptions are the flags of "mindmount eval".
type evalOptions struct {
	dir         string
	total       int
	seed        uint64
	reps        int
	verbose     bool
	vectors     bool
	fakeVectors bool
	noWN        bool
}

func (o *evalOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.dir, "golden", "", "golden set `DIR` (user_memory/, character_memory/, questions.tsv); default: built in")
	fl.IntVar(&o.total, "n", 10000, "memories in the large repository")
	fl.Uint64Var(&o.seed, "seed", 1, "seed of the synthetic distractors")
	fl.IntVar(&o.reps, "reps", 20, "latency runs per question")
	fl.BoolVar(&o.verbose, "v", false, "list the questions not answered first")
	fl.BoolVar(&o.vectors, "vectors", false, "also evaluate keyword+vector recall with the configured model")
	fl.BoolVar(&o.fakeVectors, "fake-vectors", false, "also evaluate keyword+vector recall with the offline fake embedder (no model)")
	fl.BoolVar(&o.noWN, "no-wordnet", false, "do not expand questions through WordNet (expanded when it is installed, as recall does)")
}

// hashEmbedder is llmtest's fake embedding model as a recall.Embedder.
type hashEmbedder struct{}

func (hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = llmtest.HashEmbed(t)
	}
	return out, nil
}

// evalRanking is how an evaluation ranks: the embedding model of
// --vectors or the offline fake of --fake-vectors (nil for keywords alone)
// and WordNet's expander, as recall uses it, unless --no-wordnet (nil
// for none, or when WordNet is not installed).
func evalRanking(vectors, fakeVectors, noWN bool) (e recall.Embedder, model string, x recall.Expander, err error) {
	if vectors && fakeVectors {
		return nil, "", nil, usageError{"--vectors and --fake-vectors: choose one"}
	}
	switch {
	case vectors:
		if e, model, err = newEmbedder(); err != nil {
			return nil, "", nil, err
		}
	case fakeVectors:
		e, model = hashEmbedder{}, "fake-hash-64"
	}
	if !noWN {
		x = recall.DefaultExpander()
	}
	return e, model, x, nil
}

// runEval evaluates recall on the golden set, then consolidation on its
// golden scenarios.
func runEval(ctx context.Context, o *evalOptions, args []string) error {
	if len(args) != 0 {
		return errUsage
	}
	var fsys fs.FS = golden.Embedded()
	if o.dir != "" {
		fsys = os.DirFS(o.dir)
	}
	s, err := golden.Load(fsys)
	if err != nil {
		return err
	}
	e, model, x, err := evalRanking(o.vectors, o.fakeVectors, o.noWN)
	if err != nil {
		return err
	}
	cfg := golden.Config{Total: o.total, Seed: o.seed, Reps: o.reps, Expander: x}
	if e != nil {
		cfg.Vectors = recall.NewVectors(e, model, "")
	}
	r := golden.Run(s, cfg)
	r.WriteText(stdout, o.verbose)
	cok, cwhy, err := evalConsolidation(ctx, stdout)
	if err != nil {
		return err
	}
	if ok, why := r.Pass(); !ok || !cok {
		why = append(why, cwhy...)
		for _, w := range why {
			fmt.Fprintf(stderr, "mindmount eval: %s\n", w)
		}
		return exitError{1}
	}
	return nil
}
