package secret

import (
	"bytes"
	"errors"
	"sort"
	"strings"
	"unicode/utf8"
)

// ErrUnscannable is returned by Scan when the rules could not run (gitleaks'
// configuration failed to load). A caller must then treat the bytes as
// holding a secret: what was not scanned is not committed.
var ErrUnscannable = errors.New("cannot be scanned for secrets")

// Chunking of large texts: every rule runs on chunkSize bytes at a time,
// and consecutive chunks overlap by chunkOverlap, more than the longest
// value a rule matches (a 4096-bit PEM key is about 3.3 KB), so a secret
// that straddles a boundary lies whole in one chunk.
const (
	chunkSize    = 256 << 10
	chunkOverlap = 16 << 10
)

// minRun is the shortest printable run kept from a binary file, as
// strings(1) keeps runs of 4 or more; no rule matches fewer than 8 bytes.
const minRun = 8

// Scan finds the secrets in the bytes of a file, whatever they hold: text
// is scanned as it is, in overlapping chunks when it is large; anything
// else (a NUL byte, invalid UTF-8: an attachment, a text with a NUL
// appended) through its printable runs, as strings(1) reads it. Lines are
// the file's own. It fails only when the rules cannot run.
func Scan(data []byte) ([]Finding, error) {
	if len(data) == 0 {
		return nil, nil
	}
	text, offsets := scannable(data)
	if needsGitleaks(text) && detectorFor(text) == nil {
		return nil, ErrUnscannable
	}
	spans := chunkedSpans(text)
	out := make([]Finding, 0, len(spans))
	line, at := 1, 0 // line of data[at]
	for _, s := range spans {
		orig := s.start
		if offsets != nil {
			orig = offsets.orig(s.start)
		}
		if orig < at { // not expected: spans are sorted
			line, at = 1, 0
		}
		line += bytes.Count(data[at:orig], []byte{'\n'})
		at = orig
		out = append(out, Finding{Rule: s.rule, Line: line, start: s.start, end: s.end})
	}
	return out, nil
}

// ScanAdded returns the findings of data beyond those of prev (rule by
// rule, by count), as Added does for text: a secret already committed does
// not make every later edit refused.
func ScanAdded(prev, data []byte) ([]Finding, error) {
	found, err := Scan(data)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	var before []Finding
	if len(prev) > 0 {
		if before, err = Scan(prev); err != nil {
			return nil, err
		}
	}
	return beyond(found, before), nil
}

// InName returns the secrets in a file or folder name, or a whole
// relative path, one finding per component that holds one (Line is the
// component's 1-based position): a token pasted as a file name reaches the
// tree, the commit message and every listing as surely as one in a file.
// Each component is read as it is and with '-', '_' and '.' read as
// spaces, so "password-is-hunter2" is the sentence it spells.
func InName(name string) []Finding {
	var out []Finding
	for i, c := range strings.Split(name, "/") {
		if rule := componentRule(c); rule != "" {
			out = append(out, Finding{Rule: rule, Line: i + 1})
		}
	}
	return out
}

var nameSpaces = strings.NewReplacer("-", " ", "_", " ", ".", " ")

// componentRule is the rule of the first secret in one name component, or "".
func componentRule(c string) string {
	if c == "" {
		return ""
	}
	if r := nameRule(c); r != "" {
		return r
	}
	return nameRule(nameSpaces.Replace(c))
}

// nameRule runs the rules over a short text. gitleaks' rules cost about
// 0.1 ms a call whatever the length, so they are spared a name made only
// of lower-case words ("likes-specialty-coffee.md", the usual memory
// name): every key, token and hash they find holds a digit, a capital or
// an assignment sign (a fuzz test holds the shortcut to the full rules).
// mindmount's rules (the phrasings, card numbers, URL credentials) always
// run.
func nameRule(text string) string {
	var spans []span
	if plainWords(text) {
		spans = mindmountSpans(text)
	} else {
		spans = spansOf(text)
	}
	for _, s := range spans {
		if s.end > s.start {
			return s.rule
		}
	}
	return ""
}

// plainWords reports whether s holds only lower-case ASCII letters, '-',
// '_', '.' and spaces.
func plainWords(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c == '-' || c == '_' || c == '.' || c == ' ') {
			return false
		}
	}
	return true
}

// SafeName is name with every component that holds a secret replaced by
// its rule's marker: what a log line, an error or a status file may show
// of a name InName flags.
func SafeName(name string) string {
	found := InName(name)
	if len(found) == 0 {
		return name
	}
	parts := strings.Split(name, "/")
	for _, f := range found {
		parts[f.Line-1] = Marker(f.Rule)
	}
	return strings.Join(parts, "/")
}

// runMap maps offsets of the text made of a binary file's printable runs
// back to the file.
type runMap struct {
	text []int // start of each run in the text
	file []int // start of the same run in the file
}

func (m *runMap) orig(off int) int {
	i := sort.SearchInts(m.text, off+1) - 1
	if i < 0 {
		return 0
	}
	return m.file[i] + off - m.text[i]
}

// scannable returns the text the rules read: data itself when it is UTF-8
// text, else its printable runs of minRun bytes or more, one per line,
// with the map back to data.
func scannable(data []byte) (string, *runMap) {
	if bytes.IndexByte(data, 0) < 0 && utf8.Valid(data) {
		return string(data), nil
	}
	var b strings.Builder
	m := &runMap{}
	start := -1
	flush := func(end int) {
		if start >= 0 && end-start >= minRun {
			m.text = append(m.text, b.Len())
			m.file = append(m.file, start)
			b.Write(data[start:end])
			b.WriteByte('\n')
		}
		start = -1
	}
	for i, c := range data {
		if printable(c) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(data))
	return b.String(), m
}

// printable is strings(1)'s rule widened to text: tab, newline, carriage
// return, the printable ASCII range and every byte of a multi-byte UTF-8
// sequence (valid or not: the rules read what is there).
func printable(c byte) bool {
	return c == '\t' || c == '\n' || c == '\r' || (c >= 0x20 && c != 0x7f)
}

// chunkedSpans is spansOf over text of any size: whole when it is small,
// else in overlapping chunks, each span kept by the one chunk that owns
// its start.
func chunkedSpans(text string) []span {
	if len(text) <= chunkSize {
		return spansOf(text)
	}
	var out []span
	for off := 0; off < len(text); off += chunkSize - chunkOverlap {
		end := min(off+chunkSize, len(text))
		last := end == len(text)
		owned := off + chunkSize - chunkOverlap
		for _, s := range spansOf(text[off:end]) {
			s.start += off
			s.end += off
			if s.start >= off && (last || s.start < owned) {
				if n := len(out); n > 0 && s.start < out[n-1].end {
					continue // already covered by the previous chunk's span
				}
				out = append(out, s)
			}
		}
		if last {
			break
		}
	}
	return out
}
