package secret

import (
	"sort"
	"strconv"
	"strings"
)

// Finding is one secret found in a text: which rule found it and on which
// line. It never holds the value, so it is safe to log, to show in a
// status file and to put into an error.
type Finding struct {
	Rule string // gitleaks rule ID ("stripe-access-token") or mindmount's ("mindmount-password")
	Line int    // 1-based line of the value's first byte
	Via  string // the encoding it was found inside ("gzip", "base64", "utf-16"), "" when in plain sight

	start, end int // byte span of the value in the scanned text
}

// String is "rule (line N)", or "rule (line N, inside base64)".
func (f Finding) String() string {
	if f.Via != "" {
		return f.Rule + " (line " + strconv.Itoa(f.Line) + ", inside " + f.Via + ")"
	}
	return f.Rule + " (line " + strconv.Itoa(f.Line) + ")"
}

// markerPrefix opens every redaction marker. Text already inside a marker is
// never matched again, so redaction is idempotent.
const markerPrefix = "[REDACTED"

// Marker is what a value found by rule is replaced with.
func Marker(rule string) string { return markerPrefix + ":" + rule + "]" }

// Find returns the secrets in text, in order of appearance, without
// overlaps.
func Find(text string) []Finding {
	spans := spansOf(text)
	out := make([]Finding, len(spans))
	for i, s := range spans {
		out[i] = s.finding(text)
	}
	return out
}

// Contains reports whether text holds a secret.
func Contains(text string) bool { return len(spansOf(text)) > 0 }

// Redact replaces every secret in text with the marker of its rule and
// returns the result with what was removed (rules and lines refer to the
// input).
func Redact(text string) (string, []Finding) {
	spans := spansOf(text)
	if len(spans) == 0 {
		return text, nil
	}
	var b strings.Builder
	b.Grow(len(text))
	found := make([]Finding, len(spans))
	last := 0
	for i, s := range spans {
		found[i] = s.finding(text)
		b.WriteString(text[last:s.start])
		b.WriteString(Marker(s.rule))
		last = s.end
	}
	b.WriteString(text[last:])
	return b.String(), found
}

// Count sums findings per rule, for a log line ("2 mindmount-password, 1 jwt").
func Count(fs []Finding) string {
	n := map[string]int{}
	for _, f := range fs {
		n[f.Rule]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strconv.Itoa(n[k]) + " " + k
	}
	return strings.Join(parts, ", ")
}

// span is a value to remove: bytes [start, end) of the text.
type span struct {
	start, end int
	rule       string
	reversed   bool // found in the text read backwards (Scan)
	split      bool // found with the pieces it was cut into joined (Scan)
}

func (s span) finding(text string) Finding {
	return Finding{Rule: s.rule, Line: 1 + strings.Count(text[:s.start], "\n"), start: s.start, end: s.end}
}

// spansOf runs every rule over text and merges the results: sorted,
// overlapping spans joined (the earlier one names the rule), spans inside
// an existing marker dropped.
func spansOf(text string) []span {
	var all []span
	all = append(all, gitleaksSpans(text)...)
	all = append(all, mindmountSpans(text)...)
	if len(all) == 0 {
		return nil
	}
	markers := markerSpans(text)
	kept := all[:0]
	for _, s := range all {
		if s.end <= s.start || overlapsAny(s, markers) {
			continue
		}
		kept = append(kept, s)
	}
	sort.Slice(kept, func(i, j int) bool {
		if kept[i].start != kept[j].start {
			return kept[i].start < kept[j].start
		}
		return kept[i].end > kept[j].end
	})
	var out []span
	for _, s := range kept {
		if n := len(out); n > 0 && s.start < out[n-1].end {
			if s.end > out[n-1].end {
				out[n-1].end = s.end
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// markerSpans finds the markers already in text ("[REDACTED" up to the
// next "]" on the line, or the plain "[REDACTED]" of older versions).
func markerSpans(text string) []span {
	var out []span
	off := 0
	for {
		i := strings.Index(text[off:], markerPrefix)
		if i < 0 {
			return out
		}
		start := off + i
		end := start + len(markerPrefix)
		if j := strings.IndexAny(text[end:], "]\n"); j >= 0 && text[end+j] == ']' {
			end += j + 1
		}
		out = append(out, span{start: start, end: end})
		off = end
	}
}

func overlapsAny(s span, others []span) bool {
	for _, o := range others {
		if s.start < o.end && o.start < s.end {
			return true
		}
	}
	return false
}

// allIndex returns the spans of every occurrence of v in text.
func allIndex(text, v, rule string) []span {
	var out []span
	if len(v) < minSecret {
		return nil
	}
	off := 0
	for {
		i := strings.Index(text[off:], v)
		if i < 0 {
			return out
		}
		out = append(out, span{start: off + i, end: off + i + len(v), rule: rule})
		off += i + len(v)
	}
}

// minSecret guards against a rule whose captured value is so short that
// replacing every copy of it would shred ordinary text.
const minSecret = 4

// Added returns the findings of text beyond those of before (rule by rule,
// by count): the secrets a change would add. A secret that was already
// committed does not make every later edit of the file refused; a new one
// does.
func Added(before, text string) []Finding {
	found := Find(text)
	if len(found) == 0 {
		return nil
	}
	return beyond(found, Find(before))
}

// beyond returns the findings of found beyond those of before, rule by
// rule and by count (the rule of Added and ScanAdded): which copy of a
// rule's secret is the new one cannot be told, so the later ones are.
func beyond(found, before []Finding) []Finding {
	had := map[string]int{}
	for _, f := range before {
		had[f.Rule]++
	}
	var out []Finding
	for _, f := range found {
		if had[f.Rule] > 0 {
			had[f.Rule]--
			continue
		}
		out = append(out, f)
	}
	return out
}
