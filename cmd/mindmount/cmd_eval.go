package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"

	"github.com/mindmount/mindmount/memgraph/recall"
	"github.com/mindmount/mindmount/memgraph/recall/golden"
)

func init() {
	var (
		dir     string
		total   int
		seed    uint64
		reps    int
		verbose bool
		vectors bool
	)
	register(&command{
		name:    "eval",
		usage:   "eval [--golden DIR] [-n 10000] [--reps 20] [-v]",
		summary: "measure recall quality and speed on the golden set",
		help: `Runs the offline evaluation of recall. The golden set (built in; its
source is memgraph/recall/golden/set) holds memories in the real file
format, some of them retired, and questions with the memory that answers
each. It prints recall@1, recall@3 and MRR for the golden set alone and
inside a repository grown to -n memories with deterministic synthetic
distractors, the number of retired memories returned (must be 0), and
the p50/p95 query latency at that size.

It exits 1 when a retired memory is returned or the quality goals are
missed (recall@1 >= 0.85, recall@3 >= 0.90 on the golden set). -v lists
the questions whose answer was not ranked first.

--vectors also embeds the golden set with the model configured for
consolidation (MINDMOUNT_LLM, MINDMOUNT_EMBED_MODEL, OLLAMA_HOST, ...) and
prints the quality of the fused keyword+vector ranking.`,
		flags: func(fl *flag.FlagSet) {
			fl.StringVar(&dir, "golden", "", "golden set `DIR` (user_memory/, character_memory/, questions.tsv); default: built in")
			fl.IntVar(&total, "n", 10000, "memories in the large repository")
			fl.Uint64Var(&seed, "seed", 1, "seed of the synthetic distractors")
			fl.IntVar(&reps, "reps", 20, "latency runs per question")
			fl.BoolVar(&verbose, "v", false, "list the questions not answered first")
			fl.BoolVar(&vectors, "vectors", false, "also evaluate keyword+vector fusion with the configured model")
		},
		run: func(fl *flag.FlagSet, args []string) error {
			if len(args) != 0 {
				fl.Usage()
				return exitError{2}
			}
			var fsys fs.FS = golden.Embedded()
			if dir != "" {
				fsys = os.DirFS(dir)
			}
			s, err := golden.Load(fsys)
			if err != nil {
				return err
			}
			cfg := golden.Config{Total: total, Seed: seed, Reps: reps}
			if vectors {
				e, model, err := newEmbedder()
				if err != nil {
					return err
				}
				cfg.Vectors = recall.NewVectors(e, model, "")
			}
			r := golden.Run(s, cfg)
			r.WriteText(stdout, verbose)
			cok, cwhy, err := evalConsolidation(context.Background(), stdout)
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
		},
	})
}
