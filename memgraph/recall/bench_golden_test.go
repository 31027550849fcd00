package recall_test

import (
	"testing"

	"github.com/mindmount/mindmount/memgraph/recall"
	"github.com/mindmount/mindmount/memgraph/recall/golden"
)

// BenchmarkSearch is one golden-set question against a 10,000-memory index
// (golden set + synthetic distractors), the setting; the goal is a
// p95 under 5 ms, `mindmount eval` prints the percentiles.
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
	b.ResetTimer()
	i := 0
	for b.Loop() {
		ix.Search(s.Questions[i%len(s.Questions)].Text, recall.Options{K: 10})
		i++
	}
}
