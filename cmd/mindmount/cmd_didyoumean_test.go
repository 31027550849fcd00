package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestDidYouMean: a mistyped command gets the one it most likely meant;
// a name far from every command gets none, and a hidden command is never
// offered.
func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct{ typed, want string }{
		{"mout", "mount"},
		{"mnout", "mount"},
		{"staus", "status"},
		{"sycn", "sync"},
		{"doctr", "doctor"},
		{"recal", "recall"},
		{"x", ""},
		{"deploy", ""},
		{"workr", ""},
	} {
		if got := closestCommand(tc.typed); got != tc.want {
			t.Errorf("closestCommand(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"mout"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `did you mean "mount"?`) {
		t.Errorf("mindmount mout: exit %d\n%s", code, errb.String())
	}
}

// FuzzEditDistance: the distance is symmetric, zero only for equal
// strings (as runes) and never more than the longer string's length.
func FuzzEditDistance(f *testing.F) {
	f.Add("mount", "mout")
	f.Add("", "status")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := editDistance(a, b)
		same := string([]rune(a)) == string([]rune(b)) // as runes: invalid bytes read as U+FFFD
		if d != editDistance(b, a) || (d == 0) != same || d > max(len([]rune(a)), len([]rune(b))) {
			t.Errorf("editDistance(%q, %q) = %d", a, b, d)
		}
	})
}
