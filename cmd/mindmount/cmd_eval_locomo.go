package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/mindmount/mindmount/memgraph/recall/golden"
)

// evalLocomoCommand is "mindmount eval locomo".
var evalLocomoCommand = newCommand(command{
	name:    "locomo",
	usage:   "locomo PATH [--k 10] [--conversations 0,1,2] [--vectors | --fake-vectors] [--no-wordnet]",
	summary: "measure recall on the LoCoMo conversational-memory benchmark",
	help: `Measures recall on LoCoMo (Maharana et al., "Evaluating Very Long-Term
Conversational Memory of LLM Agents", 2024): long conversations whose
questions name the dialogue turns that hold their evidence. PATH is the
benchmark's JSON file (data/locomo10.json of snap-research/LoCoMo, or a
part of it); it is not shipped with mindmount (its licence, CC BY-NC 4.0,
allows measurement, not redistribution). When PATH does not exist the
command says so and exits 0.

For each conversation it builds a temporary repository with one memory per
dialogue turn (the text, the speaker and the session's date; the file
name from the turn id, D3:13 is user_memory/d3-13.md), asks every question
of categories 1-4 through the recall that the mount, MCP and HTTP use,
and prints per category (multi-hop, temporal, open-domain, single-hop) and
overall: MRR of the first evidence turn, evidence recall@1/5/10 (the
share of a question's evidence turns in the top N), all@10 (the share of
questions with every evidence turn in the top 10), and the p50/p95 of
one recall in-process. --k is how many memories recall returns.
--conversations keeps only the conversations at those 0-based positions
in the file (a comma-separated list), to tune on some conversations and
measure on the others.

--vectors also embeds every turn with the model configured for
consolidation and measures the fused keyword+vector ranking, as recall
answers after "mindmount reindex"; --fake-vectors does so offline with
the test suite's hashed bag of words (the plumbing, not a model's worth).
Questions are expanded through WordNet when it is installed, as
"mindmount recall" does; --no-wordnet measures keywords alone.`,
}, runEvalLocomo)

// evalLocomoOptions are the flags of "mindmount eval locomo".
type evalLocomoOptions struct {
	k           int
	vectors     bool
	fakeVectors bool
	noWN        bool
	convs       string
}

func (o *evalLocomoOptions) AddFlags(fl *flag.FlagSet) {
	fl.IntVar(&o.k, "k", 10, "memories recall returns per question")
	fl.BoolVar(&o.vectors, "vectors", false, "also embed with the configured model and rank by keywords and vectors fused")
	fl.BoolVar(&o.fakeVectors, "fake-vectors", false, "the same with the offline fake embedder (no model)")
	fl.StringVar(&o.convs, "conversations", "", "only the conversations at these 0-based positions, e.g. 0,1,2")
	fl.BoolVar(&o.noWN, "no-wordnet", false, "do not expand questions through WordNet (expanded when it is installed, as recall does)")
}

func runEvalLocomo(ctx context.Context, o *evalLocomoOptions, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	if o.k <= 0 {
		return usageError{fmt.Sprintf("--k %d: want a positive number", o.k)}
	}
	e, model, x, err := evalRanking(o.vectors, o.fakeVectors, o.noWN)
	if err != nil {
		return err
	}
	f, err := os.Open(args[0])
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stdout, "LoCoMo: %s does not exist; skipped (the benchmark's data/locomo10.json is not shipped with mindmount)\n", args[0])
		return nil
	}
	if err != nil {
		return err
	}
	samples, err := golden.ParseLoCoMo(f)
	f.Close()
	if err != nil {
		return err
	}
	if samples, err = pickConversations(samples, o.convs); err != nil {
		return err
	}
	cfg := golden.LoCoMoConfig{K: o.k, Embedder: e, Model: model, Expander: x}
	tmp, err := os.MkdirTemp("", "mindmount-locomo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	rep, err := golden.RunLoCoMo(ctx, samples, tmp, cfg)
	if err != nil {
		return err
	}
	rep.WriteText(stdout)
	return nil
}

// pickConversations keeps the samples at the positions of list ("0,2,4");
// an empty list keeps them all.
func pickConversations(samples []golden.LoCoMoSample, list string) ([]golden.LoCoMoSample, error) {
	if strings.TrimSpace(list) == "" {
		return samples, nil
	}
	var out []golden.LoCoMoSample
	seen := map[int]bool{}
	for _, f := range strings.Split(list, ",") {
		i, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || i < 0 || i >= len(samples) {
			return nil, usageError{fmt.Sprintf("--conversations %q: want positions 0 to %d, comma-separated", list, len(samples)-1)}
		}
		if !seen[i] {
			seen[i] = true
			out = append(out, samples[i])
		}
	}
	return out, nil
}
