package recall_test

import (
	"slices"
	"testing"
	"time"

	"github.com/mindmount/mindmount/memgraph/recall"
	"github.com/mindmount/mindmount/memgraph/recall/golden"
)

// BenchmarkSearch is one golden-set question against a 10,000-memory index
// (golden set + synthetic distractors). It holds the latency goal that no
// test asserts: besides ns/op it reports the p50 and p95 of single queries
// and p95/goal, the ratio to golden.GoalP95 (at most 1 on a quiet
// machine); scripts/bench-recall.sh runs it and prints the ratio.
func BenchmarkSearch(b *testing.B) {
	s, err := golden.Load(golden.Embedded())
	if err != nil {
		b.Fatal(err)
	}
	ix := recall.New()
	for _, d := range s.Docs {
		ix.Put(d)
	}
	for _, d := range golden.Distractors(10000-len(s.Docs), 1) {
		ix.Put(d)
	}
	var ds []time.Duration
	b.ResetTimer()
	i := 0
	for b.Loop() {
		t0 := time.Now()
		ix.Search(s.Questions[i%len(s.Questions)].Text, recall.Options{K: 10})
		ds = append(ds, time.Since(t0))
		i++
	}
	b.StopTimer()
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	at := func(p float64) time.Duration { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
	b.ReportMetric(float64(at(0.50))/1e6, "p50-ms")
	b.ReportMetric(float64(at(0.95))/1e6, "p95-ms")
	b.ReportMetric(float64(at(0.95))/float64(golden.GoalP95), "p95/goal")
}
