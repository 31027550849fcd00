package memgraph

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// foldSpecial covers letters that do not decompose into a base letter plus
// accents under NFKD.
var foldSpecial = map[rune]string{
	'ß': "ss", 'æ': "ae", 'Æ': "ae", 'ø': "o", 'Ø': "o", 'œ': "oe", 'Œ': "oe",
	'ł': "l", 'Ł': "l", 'đ': "d", 'Đ': "d", 'þ': "th", 'Þ': "th", 'ð': "d", 'Ð': "d",
	'ı': "i", 'ħ': "h", 'Ħ': "h",
}

// Slug turns any text into a valid slug: lower-case ASCII, [a-z0-9-],
// accents folded ("José Café" -> "jose-cafe"), every other character a
// separator, at most MaxSlugLen (cut at a dash when possible), never empty
// ("memory" as fallback). A slug has no dot or slash, so it can never
// leave its folder ("../../etc/passwd" -> "etc-passwd").
func Slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range norm.NFKD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue // combining accent left over by NFKD
		}
		var piece string
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			piece = string(r)
		case r >= 'A' && r <= 'Z':
			piece = string(r + 'a' - 'A')
		default:
			piece = foldSpecial[r]
		}
		if piece == "" {
			dash = b.Len() > 0
			continue
		}
		if dash {
			b.WriteByte('-')
			dash = false
		}
		b.WriteString(piece)
	}
	return clip(b.String(), MaxSlugLen)
}

// clip shortens a slug to at most n bytes, at a dash boundary when there is
// one, and never returns an empty string.
func clip(s string, n int) string {
	if len(s) > n {
		cut := s[:n]
		if s[n] != '-' {
			if i := strings.LastIndexByte(cut, '-'); i > 0 {
				cut = cut[:i]
			}
		}
		s = cut
	}
	s = strings.Trim(s, "-")
	if s == "" {
		return "memory"
	}
	return s
}

// MaxSlugCandidates bounds UniqueSlug's search: past it, every name is
// taken and the search stops instead of looping for ever (a taken that
// cannot read the folder reports every name as taken).
const MaxSlugCandidates = 1000

// ErrNoFreeSlug is UniqueSlug's error when MaxSlugCandidates names were
// all taken.
var ErrNoFreeSlug = errors.New("no free name for a new memory")

// UniqueSlug returns base, or base-2, base-3, … the first that taken does
// not report, so a write never silently replaces another memory. Pass a
// taken that checks both the disk and the slugs already used in the same
// batch. The result is always a valid slug (base is slugged if needed and
// shortened to leave room for the suffix). After MaxSlugCandidates taken
// names it gives up with ErrNoFreeSlug.
func UniqueSlug(base string, taken func(slug string) bool) (string, error) {
	if !ValidSlug(base) {
		base = Slug(base)
	}
	if !taken(base) {
		return base, nil
	}
	for n := 2; n <= MaxSlugCandidates; n++ {
		suffix := "-" + strconv.Itoa(n)
		cand := clip(base, MaxSlugLen-len(suffix)) + suffix
		if !taken(cand) {
			return cand, nil
		}
	}
	return "", fmt.Errorf("%w: %s and %d numbered variants are taken", ErrNoFreeSlug, base, MaxSlugCandidates-1)
}

// ValidSlug reports whether s is already a valid slug: 1 to MaxSlugLen
// characters of [a-z0-9-], no leading, trailing or doubled dash.
func ValidSlug(s string) bool {
	if s == "" || len(s) > MaxSlugLen || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
