package memgraph

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlural(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{
		{0, "files"},
		{1, "file"},
		{2, "files"},
		{-1, "files"},
	}
	for _, tt := range tests {
		if got := Plural(tt.n, "file", "files"); got != tt.want {
			t.Errorf("Plural(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestClipLine(t *testing.T) {
	long := strings.Repeat("x", 299) + "éz"
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"short", "fine", 10, "fine"},
		{"collapsed", "two\n  lines\t", 10, "two lines"},
		{"escaped", "a\x1bb", 10, `a\x1bb`},
		{"exactly max", "abcde", 5, "abcde"},
		{"cut", "abcdef", 5, "abcde…"},
		{"cut before a split character", "abcdé", 5, "abcd…"},
		{"error line", long, 300, strings.Repeat("x", 299) + "…"},
	}
	for _, tt := range tests {
		got := ClipLine(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("%s: ClipLine(%q, %d) = %q, want %q", tt.name, tt.in, tt.max, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("%s: ClipLine returned invalid UTF-8 %q", tt.name, got)
		}
	}
	if got, want := ErrorLine(long), ClipLine(long, 300); got != want {
		t.Errorf("ErrorLine = %q, want ClipLine at 300 %q", got, want)
	}
	if got := ErrorLine("open x: permission denied\n"); got != "open x: permission denied" {
		t.Errorf("ErrorLine kept the newline: %q", got)
	}
}

func TestCleanRel(t *testing.T) {
	tests := []struct {
		in    string
		clean string
		ok    bool
		exact bool // isCleanRel: already clean, no backslash or NUL
	}{
		{"user_memory/a.md", "user_memory/a.md", true, true},
		{"/user_memory/a.md", "user_memory/a.md", true, false},
		{"user_memory//a.md", "user_memory/a.md", true, false},
		{"user_memory/./a.md", "user_memory/a.md", true, false},
		{"a/../b.md", "b.md", true, false},
		{`a\b.md`, `a\b.md`, true, false},
		{"a\x00b.md", "a\x00b.md", true, false},
		{"", "", false, false},
		{".", "", false, false},
		{"/", "", false, false},
		{"..", "", false, false},
		{"../x.md", "", false, false},
		{"a/../../x.md", "", false, false},
	}
	for _, tt := range tests {
		clean, ok := CleanRel(tt.in)
		if clean != tt.clean || ok != tt.ok {
			t.Errorf("CleanRel(%q) = %q, %v; want %q, %v", tt.in, clean, ok, tt.clean, tt.ok)
		}
		if got := isCleanRel(tt.in); got != tt.exact {
			t.Errorf("isCleanRel(%q) = %v, want %v", tt.in, got, tt.exact)
		}
	}
}
