package memgraph

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds the wording rules shared by everything mindmount shows or
// writes about memories: one-line text (SafeLine, ClipLine, ErrorLine) and counted
// nouns (Plural). Packages above memgraph use these rather than their own.

// SafeLine makes s safe to render inside one line of an index, CONTEXT.md
// or a search result: runs of white space (newlines, carriage returns,
// Unicode line separators) become one space, and any other control
// character is written as a visible escape (\x1b, \u0085), so nothing a
// file name, description or query holds can start a line of its own.
// Invisible format characters (Hidden: bidi overrides and isolates,
// zero-width spaces and joiners) are escaped too (\u202e), so a line
// cannot show a reader text in another order than it holds ("Trojan
// Source") or hide words between invisible marks.
func SafeLine(s string) string {
	clean := true
	prev := rune(0)
	for _, r := range s {
		if r == ' ' {
			prev = r
			continue
		}
		if IsControl(r) || unicode.IsSpace(r) || Hidden(r, prev) {
			clean = false
			break
		}
		prev = r
	}
	if clean && !strings.HasPrefix(s, " ") && !strings.HasSuffix(s, " ") && !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	for i, f := range strings.FieldsFunc(s, unicode.IsSpace) {
		if i > 0 {
			b.WriteByte(' ')
		}
		prev := rune(0)
		for _, r := range f {
			hidden := Hidden(r, prev)
			prev = r
			if IsControl(r) || hidden {
				q := strconv.QuoteRune(r) // '\x1b', '\u0085', '\ufffd'
				b.WriteString(q[1 : len(q)-1])
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

// SafeText is SafeLine for text of several lines shown as it is (a diff,
// a file): newlines and tabs stay, every other control character and
// every invisible format character (Hidden) is written as a visible
// escape.
func SafeText(s string) string {
	var b strings.Builder
	escaped, prev := false, rune(0)
	for i, r := range s {
		switch {
		case r != '\n' && r != '\t' && (IsControl(r) || Hidden(r, prev)):
			if !escaped {
				escaped = true
				b.Grow(len(s) + 8)
				b.WriteString(s[:i])
			}
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		case escaped:
			b.WriteRune(r)
		}
		prev = r
	}
	if !escaped {
		return s
	}
	return b.String()
}

// Hidden reports whether r, following prev, is an invisible format
// character (Unicode category Cf: the bidi embeddings, overrides and
// isolates U+202A–U+202E and U+2066–U+2069, zero-width spaces and joiners,
// the byte order mark, soft hyphens, tag characters). A zero-width joiner
// after a symbol is the one kept: it joins emoji ("👩‍💻") and hides
// nothing.
func Hidden(r, prev rune) bool {
	if r < 0xad || !unicode.Is(unicode.Cf, r) {
		return false
	}
	return r != '\u200d' || !unicode.Is(unicode.So, prev)
}

// HiddenIn returns the 1-based line and the character of the first
// invisible format character (Hidden) in text, or 0: what mindmount check
// warns about in a memory file, since a reader's editor may show the line
// otherwise than it reads.
func HiddenIn(text string) (line int, r rune) {
	line, prev := 1, rune(0)
	for _, c := range text {
		if Hidden(c, prev) {
			return line, c
		}
		if c == '\n' {
			line++
		}
		prev = c
	}
	return 0, 0
}

// ClipLine is SafeLine cut to at most max bytes (on a character boundary)
// and marked "…" when cut: a message from elsewhere shown on one line of
// stderr, a status file or a table cell.
func ClipLine(s string, max int) string {
	s = SafeLine(s)
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ErrorLine keeps an error message (or a remote's reply) to one line of
// stderr or of a status file: ClipLine at 300 bytes.
func ErrorLine(s string) string { return ClipLine(s, 300) }

// Plural picks the noun for a count: one when n is 1, else many
// ("1 file", "0 files", "3 files").
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
