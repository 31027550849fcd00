package memgraph

import (
	"errors"
	"strings"
	"testing"
)

func TestSlug(t *testing.T) {
	long := strings.Repeat("word ", 40) // 200 characters
	cases := []struct{ in, want string }{
		{"José Café", "jose-cafe"},
		{"Likes Coffee", "likes-coffee"},
		{"../../etc/passwd", "etc-passwd"},
		{"..", "memory"},
		{"", "memory"},
		{"   ", "memory"},
		{"日本語", "memory"},
		{"Straße & Ærø", "strasse-aero"},
		{"Crème brûlée -- déjà vu!", "creme-brulee-deja-vu"},
		{"a/b\\c.d", "a-b-c-d"},
		{"ﬁ ligature", "fi-ligature"},
		{"--Trim--", "trim"},
		{"2026 plans", "2026-plans"},
		{long, strings.TrimSuffix(strings.Repeat("word-", 16), "-")},
		{strings.Repeat("x", 200), strings.Repeat("x", 80)},
	}
	for _, c := range cases {
		got := Slug(c.in)
		if got != c.want {
			t.Errorf("Slug(%q) = %q, want %q", c.in, got, c.want)
		}
		if !ValidSlug(got) {
			t.Errorf("Slug(%q) = %q is not valid", c.in, got)
		}
	}
}

func TestValidSlug(t *testing.T) {
	for s, want := range map[string]bool{
		"a": true, "likes-coffee": true, "a1-b2": true, strings.Repeat("a", 80): true,
		"": false, "-a": false, "a-": false, "a--b": false, "A": false, "a.b": false, "a/b": false,
		"..": false, "é": false, strings.Repeat("a", 81): false,
	} {
		if got := ValidSlug(s); got != want {
			t.Errorf("ValidSlug(%q) = %v", s, got)
		}
	}
}

func TestUniqueSlug(t *testing.T) {
	onDisk := map[string]bool{"likes-tea": true, "likes-tea-2": true}
	batch := map[string]bool{}
	taken := func(s string) bool { return onDisk[s] || batch[s] }
	var got []string
	// Three facts with the same title in one batch, one colliding on disk.
	for _, title := range []string{"Likes Tea", "likes tea", "LIKES TEA!", "Other"} {
		s, err := UniqueSlug(Slug(title), taken)
		if err != nil {
			t.Fatal(err)
		}
		batch[s] = true
		got = append(got, s)
	}
	want := []string{"likes-tea-3", "likes-tea-4", "likes-tea-5", "other"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("batch slugs %v, want %v", got, want)
			break
		}
	}
	// A base of 80 characters still yields valid slugs with a suffix.
	base := strings.Repeat("ab-", 30)[:80]
	base = Slug(base)
	s, _ := UniqueSlug(base, func(x string) bool { return x == base })
	if !ValidSlug(s) || !strings.HasSuffix(s, "-2") || len(s) > MaxSlugLen {
		t.Errorf("UniqueSlug long = %q", s)
	}
	// An invalid base is slugged first.
	if s, _ := UniqueSlug("../Evil Name", func(string) bool { return false }); s != "evil-name" {
		t.Errorf("UniqueSlug invalid base = %q", s)
	}
	// A taken that reports every name (a folder it cannot read) ends the
	// search with ErrNoFreeSlug after MaxSlugCandidates names.
	asked := 0
	if s, err := UniqueSlug("likes-tea", func(string) bool { asked++; return asked <= 10*MaxSlugCandidates }); !errors.Is(err, ErrNoFreeSlug) || s != "" || asked != MaxSlugCandidates {
		t.Errorf("UniqueSlug with every name taken = %q, %v after %d names; want ErrNoFreeSlug after %d", s, err, asked, MaxSlugCandidates)
	}
}
