package mcpserver

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// TestRefusalKeepsTheType: every write-policy refusal reaches the model in
// words it can act on, and stays its typed error for errors.Is.
func TestRefusalKeepsTheType(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{tracker.ErrReadOnly, "is read_only: true"},
		{tracker.ErrSynthesized, "is generated from the memory files"},
		{tracker.ErrInbox, "is not a memory file"},
		{tracker.ErrNotMemory, "is not a memory file"},
		{tracker.ErrGitDir, "inside .git"},
		{fmt.Errorf("%w: %w", tracker.ErrBadName, memgraph.ErrSecretName), "holds a secret"},
	}
	for _, tc := range tests {
		got := refusal("x.md", tc.err)
		if !errors.Is(got, tc.err) || !strings.Contains(got.Error(), tc.want) {
			t.Errorf("refusal(%v) = %q, want %q and errors.Is", tc.err, got, tc.want)
		}
	}
	if refusal("x.md", nil) != nil {
		t.Error("refusal(nil) is not nil")
	}
}
