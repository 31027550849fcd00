package mount

import (
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// recaller is the graph's recall, when the graph has one.
type recaller interface {
	Recall(q string, opt recall.Options) []recall.Hit
}

// searchFunc returns the renderer of .mindmount/search/<query> for g, or nil
// when g cannot recall.
func searchFunc(g any) func(string) []byte {
	r, ok := g.(recaller)
	if !ok {
		return nil
	}
	return func(q string) []byte { return memgraph.RecallMarkdown(q, r.Recall(q, recall.Options{})) }
}

// renderSearch renders .mindmount/search/<query>.
func (m *mountState) renderSearch(q string) []byte {
	if m.search == nil {
		return []byte("recall not available\n")
	}
	return m.search(q)
}
