package scopetest

import (
	"context"
	"testing"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// TestCanaryGraphDoors: recall under every selector, the indexes and the
// compiled context of a user attached to team eng show no canary of
// another user or of team ops, and do show the user's and eng's.
func TestCanaryGraphDoors(t *testing.T) {
	g := Graph(t, Personal)
	_ = Attach(t, g)
	for _, w := range Words {
		for _, sel := range []string{"", memgraph.ScopeAll, memgraph.ScopePersonal, "eng", "ops"} {
			hits, _ := g.RecallScoped(context.Background(), w, recall.Options{K: 50, All: true}, sel)
			want := w
			if sel == memgraph.ScopePersonal && w == Team || sel == "eng" && w == Personal || sel == "ops" {
				want = "" // not selected: need not be found
			}
			Check(t, "recall scope "+sel, want, string(memgraph.RecallMarkdown(w, hits)))
		}
	}
	Check(t, "user index", Personal, string(g.Index(memgraph.KindUser))+string(g.FullIndex(memgraph.KindUser)))
	Check(t, "character index", Team, string(g.Index(memgraph.KindCharacter)))
	for _, max := range []int{1000, 4000, 0} {
		ctx := string(g.Context(memgraph.ContextOptions{MaxBytes: max}))
		Check(t, "context", Team, ctx)
	}
}
