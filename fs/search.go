package fs

import (
	"bytes"
	"fmt"
	"github.com/engram-dev/engram/memgraph"
	"github.com/engram-dev/engram/memgraph/recall"
)

// recaller is the graph's recall, when the graph has one.
type recaller interface {
	Recall(q string, opt recall.Options) []recall.Hit
}

// searchFunc returns the renderer of .engram/search/<query> for g, or nil
// when g cannot recall.
func searchFunc(g any) func(string) []byte {
	r, ok := g.(recaller)
	if !ok {
		return nil
	}
	return func(q string) []byte { return renderHits(q, r.Recall(q, recall.Options{})) }
}

// renderHits renders a recall ranking as markdown a shell can cat: one
// numbered entry per memory, best first, with its path (relative to the
// mount), description and the matching sentence.
func renderHits(q string, hits []recall.Hit) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Recall: %s\n\n", oneLine(q))
	if len(hits) == 0 {
		b.WriteString("No memory matches.\n")
		return b.Bytes()
	}
	for i, h := range hits {
		fmt.Fprintf(&b, "%d. %s — %s (score %.3f)\n", i+1, oneLine(h.Path), oneLine(h.Description), h.Score)
		if s := oneLine(h.Snippet); s != "" && s != oneLine(h.Description) {
			fmt.Fprintf(&b, "   > %s\n", s)
		}
	}
	return b.Bytes()
}

// oneLine keeps whatever a query, path or description holds on its line
// (the one rule: memgraph.SafeLine).
func oneLine(s string) string { return memgraph.SafeLine(s) }

// renderSearch renders .engram/search/<query>.
func (m *mountState) renderSearch(q string) []byte {
	if m.search == nil {
		return []byte("recall not available\n")
	}
	return m.search(q)
}
