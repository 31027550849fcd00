package mcpserver

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkToolCalls measures one tool call over the in-memory transport:
// reads (view, recall) and a write (use: read, validate against HEAD,
// write through openat2, commit).
func BenchmarkToolCalls(b *testing.B) {
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"view", map[string]any{"path": "user_memory/likes-tea.md"}},
		{"recall", map[string]any{"query": "what does the user drink in the morning?"}},
		{"use", map[string]any{"path": "user_memory/likes-tea.md"}},
	} {
		b.Run(tc.tool, func(b *testing.B) {
			rt := startRuntime(b, newRepo(b))
			srv := New(rt, Options{Logger: testLogger()})
			st, ct := mcp.NewInMemoryTransports()
			ctx := context.Background()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { cs.Close(); ss.Wait() })
			for b.Loop() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
				if err != nil || res.IsError {
					b.Fatalf("%s: %v %v", tc.tool, err, res)
				}
			}
		})
	}
}
