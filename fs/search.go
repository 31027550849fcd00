package fs

import (
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
	return func(q string) []byte { return memgraph.RecallMarkdown(q, r.Recall(q, recall.Options{})) }
}

// renderSearch renders .engram/search/<query>.
func (m *mountState) renderSearch(q string) []byte {
	if m.search == nil {
		return []byte("recall not available\n")
	}
	return m.search(q)
}
