package mcpserver

import (
	"testing"

	"github.com/mindmount/mindmount/memgraph/scopetest"
)

// TestRecallToolCanaries: the recall tool, under every scope argument, and
// the context tool of a user attached to team eng show no canary of
// another user or of team ops; an unattached team is a tool error.
func TestRecallToolCanaries(t *testing.T) {
	dir := newRepo(t)
	scopetest.WriteMemories(t, dir, scopetest.Personal)
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "canary")
	rt := startRuntime(t, dir)
	_ = scopetest.Attach(t, rt.Graph)
	c := connect(t, rt, nil)
	for _, w := range scopetest.Words {
		for _, sc := range []string{"", "all", "personal", "eng"} {
			want := w
			if sc == "personal" && w == scopetest.Team || sc == "eng" && w == scopetest.Personal {
				want = ""
			}
			args := map[string]any{"query": w}
			if sc != "" {
				args["scope"] = sc
			}
			text, _ := c.call("recall", args)
			scopetest.Check(t, "MCP recall scope "+sc, want, text)
		}
		text, isErr := c.call("recall", map[string]any{"query": w, "scope": "ops"})
		if !isErr {
			t.Errorf("recall in a team not attached is not an error: %s", text)
		}
		scopetest.Check(t, "MCP recall scope ops", "", text)
	}
	scopetest.Check(t, "MCP context", scopetest.Team, c.ok("context", map[string]any{}))
}
