package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate"
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

// TestConsolidationStatusIsTyped: a consolidation without a model is 503
// by its type (consolidate.ErrNoProvider), whatever its words; an error
// that merely says "no language model" is not.
func TestConsolidationStatusIsTyped(t *testing.T) {
	if got := consolidationStatus(fmt.Errorf("run: %w", consolidate.ErrNoProvider)); got != http.StatusServiceUnavailable {
		t.Errorf("ErrNoProvider: %d, want 503", got)
	}
	if got := consolidationMessage(consolidate.ErrNoProvider); !strings.Contains(got, "no language model is configured") {
		t.Errorf("ErrNoProvider message: %q", got)
	}
	if got := consolidationStatus(errors.New("no language model here, just words")); got == http.StatusServiceUnavailable {
		t.Errorf("an untyped error matched by its words: %d", got)
	}
}
