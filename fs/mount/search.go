package mount

import (
	"context"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// recaller is the graph's recall, when the graph has one.
type recaller interface {
	Recall(q string, opt recall.Options) []recall.Hit
}

// scopedRecaller is a graph that recalls across its attached teams.
type scopedRecaller interface {
	RecallScoped(ctx context.Context, q string, opt recall.Options, sel string) ([]recall.Hit, error)
	Scopes() []memgraph.Scope
}

// searchFunc returns the renderer of .mindmount/search/<query> for g, or nil
// when g cannot recall. A name starting "@eng " searches team eng only
// ("@personal ", "@all "; memgraph.ParseScopedQuery); any other name
// searches every scope. With no team attached, the name is the question,
// whatever it starts with.
func searchFunc(g any) func(string) []byte {
	if s, ok := g.(scopedRecaller); ok {
		return func(name string) []byte {
			sel, q := "", name
			if len(s.Scopes()) > 0 {
				sel, q = memgraph.ParseScopedQuery(name)
			}
			hits, err := s.RecallScoped(context.Background(), q, recall.Options{}, sel)
			if err != nil {
				return []byte("# Recall: " + memgraph.SafeLine(q) + "\n\n" + memgraph.SafeLine(err.Error()) + "\n")
			}
			return memgraph.RecallMarkdown(q, hits)
		}
	}
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
