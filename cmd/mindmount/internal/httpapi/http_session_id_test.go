package httpapi

import (
	"strings"
	"testing"
)

// TestValidSession: a session ID names a transcript, so it holds no
// control character by mindmount's one rule (memgraph.IsControl), C1 and
// line separators included.
func TestValidSession(t *testing.T) {
	tests := map[string]bool{
		"abc-123":                true,
		"with space":             true,
		"ünïcode":                true,
		"nl\n":                   false,
		"del\x7f":                false,
		"c1\u0085":               false,
		"ls\u2028":               false,
		strings.Repeat("a", 128): true,
		strings.Repeat("a", 129): false,
	}
	for id, ok := range tests {
		if err := validSession(id); (err == nil) != ok {
			t.Errorf("validSession(%q) = %v, want ok=%v", id, err, ok)
		}
	}
}
