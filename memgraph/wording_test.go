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

// TestSafeLineHidden: invisible format characters are shown as escapes,
// so a reviewer reads the line in the order it holds; a zero-width joiner
// inside an emoji is kept.
func TestSafeLineHidden(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"right-to-left override", "approve \u202egnp.exe\u202c", `approve \u202egnp.exe\u202c`},
		{"embeddings", "a\u202ab\u202bc\u202dd", `a\u202ab\u202bc\u202dd`},
		{"isolates", "x\u2066y\u2067z\u2068w\u2069", `x\u2066y\u2067z\u2068w\u2069`},
		{"zero-width space and joiner between letters", "pass\u200bword\u200d", `pass\u200bword\u200d`},
		{"byte order mark", "\ufeffTitle", `\ufeffTitle`},
		{"soft hyphen", "co\u00adop", `co\u00adop`},
		{"tag character", "a\U000E0041", `a\U000e0041`},
		{"emoji joined", "👩\u200d💻 coder", "👩\u200d💻 coder"},
		{"plain accents stay", "café Zürich", "café Zürich"},
		{"with spaces and controls", " a\u202e \x1b b ", `a\u202e \x1b b`},
	}
	for _, tt := range tests {
		if got := SafeLine(tt.in); got != tt.want {
			t.Errorf("%s: SafeLine(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	for in, want := range map[string]int{"# T\n\nplain\n": 0, "# T\n\nbad \u202e here\n": 3, "\u200bx": 1, "👩\u200d💻\n": 0} {
		if line, _ := HiddenIn(in); line != want {
			t.Errorf("HiddenIn(%q) = line %d, want %d", in, line, want)
		}
	}
}

// FuzzSafeLineHidden: no invisible format character survives SafeLine
// (but the joiner of an emoji), and SafeLine is idempotent.
func FuzzSafeLineHidden(f *testing.F) {
	for _, s := range []string{"", "\u202eabc\u202c", "👩\u200d💻", "\u200d\u200d", "a \u2066 b", "\ufeff\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := SafeLine(s)
		if line, r := HiddenIn(out); line != 0 {
			t.Fatalf("SafeLine(%q) = %q keeps %U", s, out, r)
		}
		if SafeLine(out) != out {
			t.Fatalf("SafeLine not idempotent on %q: %q -> %q", s, out, SafeLine(out))
		}
	})
}

func TestSafeText(t *testing.T) {
	for in, want := range map[string]string{
		"plain\n\tindented\n":       "plain\n\tindented\n",
		"+ fact \u202eevil\u202c\n": "+ fact \\u202eevil\\u202c\n",
		"a\r\nb\x1b[31m\n":          "a\\r\nb\\x1b[31m\n",
		"👩\u200d💻 and \u200b":       "👩\u200d💻 and \\u200b",
	} {
		if got := SafeText(in); got != want {
			t.Errorf("SafeText(%q) = %q, want %q", in, got, want)
		}
	}
}
