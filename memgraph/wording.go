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
func SafeLine(s string) string {
	clean := true
	for _, r := range s {
		if r == ' ' {
			continue
		}
		if IsControl(r) || unicode.IsSpace(r) {
			clean = false
			break
		}
	}
	if clean && !strings.HasPrefix(s, " ") && !strings.HasSuffix(s, " ") && !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	for i, f := range strings.FieldsFunc(s, unicode.IsSpace) {
		if i > 0 {
			b.WriteByte(' ')
		}
		for _, r := range f {
			if IsControl(r) {
				q := strconv.QuoteRune(r) // '\x1b', '\u0085', '\ufffd'
				b.WriteString(q[1 : len(q)-1])
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
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
