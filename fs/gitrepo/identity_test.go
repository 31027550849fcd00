package gitrepo

import (
	"strings"
	"testing"
	"time"
)

func TestShortHash(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0123456789abcdef0123456789abcdef01234567", "0123456"},
		{"01234567", "0123456"},
		{"0123456", "0123456"},
		{"abc", "abc"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := ShortHash(tt.in); got != tt.want {
			t.Errorf("ShortHash(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestWriter(t *testing.T) {
	tests := []struct {
		name string
		want Author
	}{
		{"agent", Author{"agent", "agent@mindmount.local"}},
		{"mcp (claude-code)", Author{"mcp (claude-code)", "mcp@mindmount.local"}},
		{"mindmount", Mindmount},
		{"", Mindmount},
		{"  ", Mindmount},
	}
	for _, tt := range tests {
		if got := Writer(tt.name); got != tt.want {
			t.Errorf("Writer(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
	// A commit without an author is mindmount's own, as init's are.
	if got := identLine(Author{}, time.Unix(1700000000, 0)); !strings.HasPrefix(got, "mindmount <mindmount@mindmount.local> 1700000000 ") {
		t.Errorf("identLine of no author = %q", got)
	}
}

func TestSubject(t *testing.T) {
	tests := []struct{ in, want string }{
		{"agent: add a.md\n\nA a.md\n", "agent: add a.md"},
		{"one line", "one line"},
		{"\n  padded\nbody", "padded"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Subject(tt.in); got != tt.want {
			t.Errorf("Subject(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
