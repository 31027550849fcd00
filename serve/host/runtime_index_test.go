package host

import (
	"testing"
)

// RuntimeConfig.IndexTokens (the daemons' --index-tokens) overrides the
// repository's index budget.
func TestRuntimeIndexTokens(t *testing.T) {
	dir := newUser(t, t.TempDir(), "ada")
	rt, err := OpenRuntime(dir, RuntimeConfig{IndexTokens: 321})
	if err != nil {
		t.Fatal(err)
	}
	if got := rt.Graph.IndexTokens(); got != 321 {
		t.Fatalf("IndexTokens = %d, want 321", got)
	}
}
