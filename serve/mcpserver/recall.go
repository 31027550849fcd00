package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// defaultBudget is the context tool's budget in tokens when none is given:
// CONTEXT.md's default size.
const defaultBudget = memgraph.DefaultContextBytes / memgraph.BytesPerToken

func (s *server) recall(ctx context.Context, req *mcp.CallToolRequest, in recallArgs) (*mcp.CallToolResult, any, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return nil, nil, errors.New("query is empty; ask a question in plain words, e.g. \"what does the user drink?\"")
	}
	switch in.Kind {
	case "", string(memgraph.KindUser), string(memgraph.KindCharacter):
	default:
		return nil, nil, fmt.Errorf("kind %q: use \"user\", \"character\", or leave it out for both", in.Kind)
	}
	if in.K < 0 || in.K > 100 {
		return nil, nil, fmt.Errorf("k %d: ask for 1 to 100 memories (default 10)", in.K)
	}
	hits, err := s.g.RecallScoped(ctx, q, recall.Options{K: in.K, Kind: in.Kind, All: in.All}, in.Scope)
	if err != nil {
		return nil, nil, err
	}
	if len(hits) == 0 {
		return textResult(fmt.Sprintf("no memory matches %q; try other words, or view /memories", q)), nil, nil
	}
	var b strings.Builder
	for i, h := range hits {
		fmt.Fprintf(&b, "%d. %s%s\n   %s\n", i+1, memgraph.SafeLine(shown(h.Path)), memgraph.RetiredTag(h.Status), memgraph.SafeLine(h.Description))
		if h.Snippet != "" && h.Snippet != h.Description {
			fmt.Fprintf(&b, "   > %s\n", memgraph.SafeLine(h.Snippet))
		}
	}
	b.WriteString("\nview a path for the whole memory; call use on the ones that helped.")
	return textResult(b.String()), nil, nil
}

func (s *server) compiled(ctx context.Context, req *mcp.CallToolRequest, in contextArgs) (*mcp.CallToolResult, any, error) {
	if in.Budget < 0 {
		return nil, nil, fmt.Errorf("budget %d: give a positive number of tokens, or leave it out (default %d)", in.Budget, defaultBudget)
	}
	return textResult(string(s.g.Context(memgraph.ContextOptions{MaxTokens: in.Budget}))), nil, nil
}
