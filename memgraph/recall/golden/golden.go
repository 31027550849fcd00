// Package golden is the offline evaluation of recall: a golden set of
// memories and questions kept in the repository (set/), deterministic
// synthetic distractors that grow it to a 10,000-memory repository, and the
// metrics (recall@1, recall@3, MRR, retired memories returned, query
// latency). `mindmount eval` prints them; the package test keeps the goals in
// CI.
package golden

import (
	"bufio"
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

//go:embed set
var embedded embed.FS

// Embedded returns the golden set built into the binary.
func Embedded() fs.FS {
	sub, err := fs.Sub(embedded, "set")
	if err != nil {
		panic(err) // unreachable: "set" is embedded above
	}
	return sub
}

// Goals for keyword recall on the golden set. The quality goals are
// checked by Pass (and so by the package test and `mindmount eval`'s exit
// status); the latency goal depends on the machine and its load, so it is
// only printed, and checked by a benchmark (BenchmarkSearch in
// memgraph/recall, run by scripts/bench-recall.sh), never by a test.
const (
	GoalAt1 = 0.85
	GoalAt3 = 0.90
	GoalP95 = 5 * time.Millisecond
)

// Question is one line of questions.tsv.
type Question struct {
	Text     string
	Want     string // repo-relative path of the memory that answers it
	Category string // paraphrase, morphology, name, retired-trap
}

// Set is a loaded golden set.
type Set struct {
	Docs      []recall.Doc
	Questions []Question
}

// Retired returns how many of the set's memories are not active.
func (s *Set) Retired() int {
	n := 0
	for _, d := range s.Docs {
		if !d.Active {
			n++
		}
	}
	return n
}

// Load reads memory files (user_memory/, character_memory/) in the real
// file format and questions.tsv from fsys. Invalid files are errors: the
// golden set must be what mindmount itself would accept.
func Load(fsys fs.FS) (*Set, error) {
	s := &Set{}
	byPath := map[string]recall.Doc{}
	for _, dir := range []string{memgraph.UserDir, memgraph.CharacterDir} {
		ents, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if e.IsDir() || path.Ext(e.Name()) != ".md" {
				continue
			}
			rel := dir + "/" + e.Name()
			data, err := fs.ReadFile(fsys, rel)
			if err != nil {
				return nil, err
			}
			if probs := memgraph.Validate(rel, data, nil); len(probs) > 0 {
				return nil, fmt.Errorf("golden set: %s", probs[0])
			}
			m, probs := memgraph.Parse(rel, data)
			if m == nil || len(probs) > 0 {
				return nil, fmt.Errorf("golden set: %s does not parse: %v", rel, probs)
			}
			d := memgraph.RecallDoc(m)
			s.Docs = append(s.Docs, d)
			byPath[rel] = d
		}
	}
	f, err := fsys.Open("questions.tsv")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		parts := strings.Split(t, "\t")
		if len(parts) < 2 {
			return nil, fmt.Errorf("questions.tsv:%d: want question<TAB>path[<TAB>category]", line)
		}
		q := Question{Text: parts[0], Want: parts[1]}
		if len(parts) > 2 {
			q.Category = parts[2]
		}
		d, ok := byPath[q.Want]
		if !ok {
			return nil, fmt.Errorf("questions.tsv:%d: no memory %s", line, q.Want)
		}
		if !d.Active {
			return nil, fmt.Errorf("questions.tsv:%d: %s is retired; answers must be active memories", line, q.Want)
		}
		s.Questions = append(s.Questions, q)
	}
	return s, sc.Err()
}

// Miss is a question whose answer was not ranked first.
type Miss struct {
	Question Question
	Rank     int      // 1-based rank of the answer, 0 when not in the top 10
	Got      []string // the top paths returned
}

// Metrics are the quality figures of one index over the questions.
type Metrics struct {
	Docs      int
	Questions int
	At1, At3  float64
	MRR       float64
	Retired   int // retired memories returned by default searches (must be 0)
	Misses    []Miss
}

// Evaluate runs every question against ix (top 10, default options) and
// scores the rank of the expected memory.
func Evaluate(ix *recall.Index, qs []Question) Metrics {
	m := Metrics{Docs: ix.Len(), Questions: len(qs)}
	var at1, at3 int
	for _, q := range qs {
		hits := ix.Search(q.Text, recall.Options{K: 10})
		rank := 0
		var got []string
		for i, h := range hits {
			if h.Status != string(memgraph.StatusActive) && h.Status != "" {
				m.Retired++
			}
			got = append(got, h.Path)
			if h.Path == q.Want && rank == 0 {
				rank = i + 1
			}
		}
		if rank == 1 {
			at1++
		}
		if rank >= 1 && rank <= 3 {
			at3++
		}
		if rank > 0 {
			m.MRR += 1 / float64(rank)
		}
		if rank != 1 {
			m.Misses = append(m.Misses, Miss{Question: q, Rank: rank, Got: got[:min(3, len(got))]})
		}
	}
	if n := float64(len(qs)); n > 0 {
		m.At1, m.At3, m.MRR = float64(at1)/n, float64(at3)/n, m.MRR/n
	}
	return m
}

// Latency summarises query times.
type Latency struct {
	Queries       int
	P50, P95, Max time.Duration
}

// MeasureLatency runs every question reps times against ix, in-process.
func MeasureLatency(ix *recall.Index, qs []Question, reps int) Latency {
	var ds []time.Duration
	for range reps {
		for _, q := range qs {
			t0 := time.Now()
			ix.Search(q.Text, recall.Options{K: 10})
			ds = append(ds, time.Since(t0))
		}
	}
	if len(ds) == 0 {
		return Latency{}
	}
	slices.Sort(ds)
	at := func(p float64) time.Duration { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
	return Latency{Queries: len(ds), P50: at(0.50), P95: at(0.95), Max: ds[len(ds)-1]}
}

// Config sizes a run.
type Config struct {
	Total int    // memories in the large repository (golden + distractors); 0 means 10,000
	Seed  uint64 // distractor seed
	Reps  int    // latency repetitions per question; 0 means 20
	// Vectors, when set, also evaluates keyword+vector fusion on the golden
	// set alone (the distractors are not embedded: 10,000 model calls are
	// not an offline evaluation).
	Vectors *recall.Vectors
	// Expander, when set, expands every question (recall.SetExpander).
	Expander recall.Expander
}

// Report is the outcome of Run.
type Report struct {
	Golden   Metrics // the golden set alone
	Full     Metrics // golden set + distractors
	Latency  Latency // over the full repository
	Build    time.Duration
	Retired  int // retired memories in the golden set
	Distract int
	// Fused is the golden set with vectors (Config.Vectors); VectorErr
	// says why it is missing when embedding failed.
	Fused     *Metrics
	VectorErr error
	Expanded  bool // questions were expanded (WordNet)
}

// Run evaluates the set alone and inside a repository grown to cfg.Total
// memories with synthetic distractors.
func Run(s *Set, cfg Config) Report {
	if cfg.Total <= 0 {
		cfg.Total = 10000
	}
	if cfg.Reps <= 0 {
		cfg.Reps = 20
	}
	small := recall.New()
	small.SetExpander(cfg.Expander)
	for _, d := range s.Docs {
		small.Put(d)
	}
	r := Report{Golden: Evaluate(small, s.Questions), Retired: s.Retired(), Expanded: cfg.Expander != nil}
	if cfg.Vectors != nil {
		r.Fused, r.VectorErr = evaluateFused(s, cfg.Vectors)
	}

	extra := Distractors(max(0, cfg.Total-len(s.Docs)), cfg.Seed)
	t0 := time.Now()
	big := recall.New()
	big.SetExpander(cfg.Expander)
	for _, d := range s.Docs {
		big.Put(d)
	}
	for _, d := range extra {
		big.Put(d)
	}
	r.Build = time.Since(t0)
	r.Distract = len(extra)
	r.Full = Evaluate(big, s.Questions)
	r.Latency = MeasureLatency(big, s.Questions, cfg.Reps)
	return r
}

func evaluateFused(s *Set, v *recall.Vectors) (*Metrics, error) {
	ix := recall.New()
	for _, d := range s.Docs {
		ix.Put(d)
	}
	if err := ix.SetVectors(v, false); err != nil {
		return nil, err
	}
	defer ix.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := ix.Reindex(ctx, nil); err != nil {
		return nil, err
	}
	m := Evaluate(ix, s.Questions)
	return &m, nil
}

// Pass reports whether the report meets the quality goals. Retired results
// fail always; recall@1 and recall@3 apply to the golden set alone. Latency
// is not a goal of Pass: a busy machine must not fail it.
func (r Report) Pass() (ok bool, why []string) {
	if n := r.Golden.Retired + r.Full.Retired; n > 0 {
		why = append(why, fmt.Sprintf("%d retired memories returned", n))
	}
	if r.Fused != nil && r.Fused.Retired > 0 {
		why = append(why, fmt.Sprintf("%d retired memories returned with vectors", r.Fused.Retired))
	}
	if r.Golden.At1 < GoalAt1 {
		why = append(why, fmt.Sprintf("recall@1 %.3f < %.2f", r.Golden.At1, GoalAt1))
	}
	if r.Golden.At3 < GoalAt3 {
		why = append(why, fmt.Sprintf("recall@3 %.3f < %.2f", r.Golden.At3, GoalAt3))
	}
	return len(why) == 0, why
}

// WriteText prints the report for a person.
func (r Report) WriteText(w io.Writer, verbose bool) {
	g, f := r.Golden, r.Full
	fmt.Fprintf(w, "golden set: %d memories (%d retired), %d questions\n", g.Docs, r.Retired, g.Questions)
	if r.Expanded {
		fmt.Fprintln(w, "questions expanded through WordNet")
	}
	fmt.Fprintf(w, "repository: %d memories (golden set + %d synthetic distractors), built in %v\n\n",
		f.Docs, r.Distract, r.Build.Round(time.Millisecond))
	fmt.Fprintf(w, "%-22s %9s %9s %7s %8s\n", "", "recall@1", "recall@3", "MRR", "retired")
	fmt.Fprintf(w, "%-22s %9.3f %9.3f %7.3f %8d\n", "golden set", g.At1, g.At3, g.MRR, g.Retired)
	fmt.Fprintf(w, "%-22s %9.3f %9.3f %7.3f %8d\n", fmt.Sprintf("%d memories", f.Docs), f.At1, f.At3, f.MRR, f.Retired)
	if r.Fused != nil {
		v := r.Fused
		fmt.Fprintf(w, "%-22s %9.3f %9.3f %7.3f %8d\n", "golden set + vectors", v.At1, v.At3, v.MRR, v.Retired)
	} else if r.VectorErr != nil {
		fmt.Fprintf(w, "%-22s %s\n", "golden set + vectors", "unavailable: "+r.VectorErr.Error())
	}
	l := r.Latency
	fmt.Fprintf(w, "\nquery latency at %d memories (%d queries, in-process): p50 %s  p95 %s  max %s\n",
		f.Docs, l.Queries, ms(l.P50), ms(l.P95), ms(l.Max))
	fmt.Fprintf(w, "latency goal: p95 < %s on a quiet machine (%.2f of it here; checked by scripts/bench-recall.sh, not here)\n", ms(GoalP95), float64(l.P95)/float64(GoalP95))
	fmt.Fprintf(w, "goals: recall@1 >= %.2f, recall@3 >= %.2f, retired = 0\n", GoalAt1, GoalAt3)
	if ok, why := r.Pass(); ok {
		fmt.Fprintln(w, "goals met")
	} else {
		for _, x := range why {
			fmt.Fprintf(w, "MISSED: %s\n", x)
		}
	}
	if verbose {
		for _, set := range []struct {
			name string
			m    Metrics
		}{{"golden set", g}, {fmt.Sprintf("%d memories", f.Docs), f}, {"golden set + vectors", derefOr(r.Fused)}} {
			if len(set.m.Misses) == 0 {
				continue
			}
			fmt.Fprintf(w, "\nnot first (%s):\n", set.name)
			ms := slices.Clone(set.m.Misses)
			sort.SliceStable(ms, func(i, j int) bool { return ms[i].Question.Category < ms[j].Question.Category })
			for _, x := range ms {
				rank := "-"
				if x.Rank > 0 {
					rank = fmt.Sprint(x.Rank)
				}
				fmt.Fprintf(w, "  [%s] %q: want %s at %s; got %s\n", x.Question.Category, x.Question.Text, x.Question.Want, rank, strings.Join(x.Got, ", "))
			}
		}
	}
}

func derefOr(m *Metrics) Metrics {
	if m == nil {
		return Metrics{}
	}
	return *m
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }
