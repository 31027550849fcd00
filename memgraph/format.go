package memgraph

import (
	"bytes"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// A memory file is kept as raw pieces (the frontmatter block and one piece
// per "## " section) so that Render gives back exactly the bytes that were
// parsed, and a mutator only rewrites the piece it changes. Anything a person
// wrote that we do not understand (comments in the YAML, extra sections, text
// before the first section) is carried along verbatim.

// rawMemory keeps the original bytes of a memory so Render can give them back.
type rawMemory struct {
	fm   string    // frontmatter block including both "---" lines; "" when absent
	bad  bool      // fm is not valid YAML (so "missing description" would be noise)
	keys []fmKey   // top-level keys of fm, in order, with their line spans
	secs []section // secs[0] is the preamble (title and anything before the first "## ")
}

// fmKey is one top-level frontmatter key and the lines it spans inside fm
// (0-based line indexes of fm, end exclusive).
type fmKey struct {
	name       string
	start, end int
}

// section is one "## Heading" and the text up to the next heading.
type section struct {
	name string // lower-cased heading text ("fact", "access log"); "" for the preamble
	raw  string // heading line and body, with the trailing newlines
	line int    // 1-based line of the heading in the file
}

const (
	secFact      = "fact"
	secEpisode   = "episode"
	secAccessLog = "access log"
	// secPinned is the reference system's mark of a safety fact: a
	// "## Pinned" section reads as pinned: true.
	secPinned = "pinned"
)

// String renders "path:line: message" (or "path: message" when Line is 0).
func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.Path, p.Msg)
}

// Parse parses a memory file. It never panics. Problems are returned for
// anything that makes the file invalid as the content of path (see
// Validate, which adds the read_only rule against the previous version).
// The returned memory is never nil; when there are problems it holds what
// could be understood and still renders back to data.
func Parse(path string, data []byte) (*Memory, []Problem) {
	if IsSkillPath(path) {
		return parseSkillMemory(path, data)
	}
	m := &Memory{Path: path}
	probs := nameProblems(path) // one name rule for the graph, check and hooks
	add := func(line int, format string, args ...any) {
		probs = append(probs, Problem{Path: path, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	sizeProb, tooBig := sizeProblem(sizeMemory, path, int64(len(data)))
	if tooBig {
		probs = append(probs, sizeProb)
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		add(lineAt(data, i), "file contains a NUL byte at offset %d; memory files must be plain UTF-8 text", i)
	}
	if !utf8.Valid(data) {
		off := firstInvalidUTF8(data)
		add(lineAt(data, off), "file is not valid UTF-8 (first bad byte 0x%02x at offset %d); save it as UTF-8", data[off], off)
	}
	text := string(data)
	if tooBig {
		// Too big to be a memory: keep the bytes for Render, but do not
		// spend time (or YAML decoding) on what cannot be valid anyway.
		m.raw.secs = []section{{raw: text, line: 1}}
		return m, probs
	}
	body, bodyLine := text, 1
	unclosed := false
	if fm, rest, ok := splitFrontmatter(text); ok {
		m.raw.fm = fm
		body = rest
		bodyLine = strings.Count(fm, "\n") + 1
		probs = append(probs, m.parseFrontmatter()...)
	} else if rest != "" {
		unclosed = true
		// Opened and never closed: treat everything as body so Render
		// still gives the bytes back, and say what is wrong.
		add(1, "frontmatter starts with '---' on line 1 but is never closed; add a line containing only '---' after the last key")
	}
	m.raw.secs = splitSections(body, bodyLine)
	probs = append(probs, m.parseBody()...)
	if (KindOf(path) == KindUser || KindOf(path) == KindCharacter) && !unclosed {
		if m.raw.fm == "" {
			add(1, "missing frontmatter: start the file with '---', a line 'description: <one line saying what this memory is about>', and '---'")
		} else if !m.hasKey("description") && !m.raw.bad {
			add(1, "missing description: add 'description: <one line saying what this memory is about>' to the frontmatter")
		}
	}
	return m, probs
}

// Body is text without its frontmatter block: what a reader shows as the
// memory's markdown. Text without a closed frontmatter is all body.
func Body(text string) string {
	if _, rest, ok := splitFrontmatter(text); ok {
		return rest
	}
	return text
}

// splitFrontmatter splits text into the frontmatter block (both delimiter
// lines included) and the rest. ok is false when there is no frontmatter;
// then rest is non-empty only when a block was opened and never closed.
func splitFrontmatter(text string) (fm, rest string, ok bool) {
	first, after, found := strings.Cut(text, "\n")
	// A byte order mark, which some Windows editors write, does not hide
	// the frontmatter.
	if !found || strings.TrimRight(strings.TrimPrefix(first, "\ufeff"), " \t\r") != "---" {
		return "", "", false
	}
	pos := len(first) + 1
	for pos <= len(text) && after != "" {
		line, next, more := strings.Cut(after, "\n")
		t := strings.TrimRight(line, " \t\r")
		end := pos + len(line)
		if more {
			end++
		}
		if t == "---" || t == "..." {
			return text[:end], text[end:], true
		}
		pos = end
		after = next
		if !more {
			break
		}
	}
	return "", text, false
}

// splitSections cuts the body at every line starting with "## " outside a
// fenced code block (an example memory in a README is not a section of
// the README). The first piece (the preamble) is always present, possibly
// empty.
func splitSections(body string, firstLine int) []section {
	secs := []section{{line: firstLine}}
	start, line := 0, firstLine
	var fence fences
	for pos := 0; pos < len(body); {
		end := strings.IndexByte(body[pos:], '\n')
		if end < 0 {
			end = len(body)
		} else {
			end += pos + 1
		}
		// A fence line, or a line inside a fenced block, is never a heading.
		if name, ok := headingName(body[pos:end]); !fence.step(body[pos:end]) && ok {
			secs[len(secs)-1].raw = body[start:pos]
			secs = append(secs, section{name: name, line: line})
			start = pos
		}
		pos = end
		line++
	}
	secs[len(secs)-1].raw = body[start:]
	return secs
}

// fences follows fenced code blocks line by line.
type fences struct{ open string }

// step takes the next line and reports whether it is a fence line or lies
// inside a fenced block.
func (f *fences) step(line string) bool {
	m := fenceMarker(line)
	switch {
	case f.open == "" && m != "":
		f.open = m
		return true
	case f.open != "" && m != "" && strings.HasPrefix(m, f.open):
		f.open = ""
		return true
	}
	return f.open != ""
}

// fenceMarker returns the run of backticks or tildes (three or more) that
// opens or closes a fenced code block on line, or "".
func fenceMarker(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return t[:n]
}

// headingName reports whether line is a level-2 heading and returns its
// lower-cased text.
func headingName(line string) (string, bool) {
	if !strings.HasPrefix(line, "##") {
		return "", false
	}
	rest := line[2:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\n' && rest[0] != '\r' {
		return "", false
	}
	return strings.ToLower(strings.TrimSpace(rest)), true
}

// parseBody fills Title, Fact, Episode, Uses and LastUsed from the sections.
func (m *Memory) parseBody() []Problem {
	var probs []Problem
	m.Title, m.Fact, m.Episode, m.Uses, m.LastUsed = "", "", "", 0, time.Time{}
	for _, l := range strings.Split(m.raw.secs[0].raw, "\n") {
		if strings.HasPrefix(l, "# ") {
			m.Title = strings.TrimSpace(l[2:])
			break
		}
	}
	seen := map[string]bool{}
	hasLog := false
	for _, s := range m.raw.secs[1:] {
		hasLog = hasLog || s.name == secAccessLog
	}
	if !hasLog {
		for _, s := range m.raw.secs {
			probs = append(probs, strayUses(m.Path, s)...)
		}
	}
	for _, s := range m.raw.secs[1:] {
		if seen[s.name] {
			continue // a repeated section is kept verbatim but only the first one counts
		}
		seen[s.name] = true
		switch s.name {
		case secPinned:
			m.Front.Pinned = true
		case secFact:
			m.Fact = strings.TrimSpace(sectionBody(s.raw))
		case secEpisode:
			m.Episode = strings.TrimSpace(sectionBody(s.raw))
		case secAccessLog:
			lines := strings.Split(sectionBody(s.raw), "\n")
			for i, l := range lines {
				when, use, ok := UseStamp(l)
				if !use {
					continue
				}
				if !ok {
					probs = append(probs, Problem{Path: m.Path, Line: s.line + 1 + i,
						Msg: "this access log line has a bad date; write it as 'used, DD.MM.YY' (for example 'used, 31.08.26')"})
					continue
				}
				m.Uses++
				if when.After(m.LastUsed) {
					m.LastUsed = when
				}
			}
		}
	}
	return probs
}

// strayUses reports "used, DD.MM.YY" lines of a file that has no Access
// log: such a stamp (typically "echo used, ... >>" on a file without the
// heading) is not counted, and saying so beats ignoring it silently. With
// an Access log present, a stamp-like line elsewhere is ordinary text.
func strayUses(path string, s section) []Problem {
	var probs []Problem
	var fence fences
	for i, l := range strings.Split(s.raw, "\n") {
		t := strings.TrimSpace(l)
		if fence.step(l) {
			continue
		}
		if _, use, ok := UseStamp(l); !use || !ok {
			continue
		}
		probs = append(probs, Problem{Path: path, Line: s.line + i,
			Msg: fmt.Sprintf("use stamp %q is outside the '## Access log' section and is not counted; put it under a '## Access log' heading", t)})
	}
	return probs
}

// sectionBody returns raw without its heading line.
func sectionBody(raw string) string {
	if _, body, ok := strings.Cut(raw, "\n"); ok {
		return body
	}
	return ""
}

// Render returns the file bytes. Render(Parse(x)) == x for every x.
func (m *Memory) Render() []byte {
	n := len(m.raw.fm)
	for _, s := range m.raw.secs {
		n += len(s.raw)
	}
	b := make([]byte, 0, n)
	b = append(b, m.raw.fm...)
	for _, s := range m.raw.secs {
		b = append(b, s.raw...)
	}
	return b
}

// Clone returns a copy whose mutators do not affect m.
func (m *Memory) Clone() *Memory {
	c := *m
	c.Front.Tags = append([]string(nil), m.Front.Tags...)
	c.Front.Keywords = append([]string(nil), m.Front.Keywords...)
	c.raw.keys = append([]fmKey(nil), m.raw.keys...)
	c.raw.secs = append([]section(nil), m.raw.secs...)
	return &c
}

// Active reports whether the memory is active (status absent or "active").
func (m *Memory) Active() bool {
	return m.Front.Status == "" || m.Front.Status == StatusActive
}

// Slug is the file name without folder and ".md".
func (m *Memory) Slug() string {
	s := m.Path
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSuffix(s, ".md")
}

// SetDescription sets the frontmatter description (newlines become spaces:
// the description is the one line shown in the index).
func (m *Memory) SetDescription(s string) {
	s = SafeLine(s)
	m.Front.Description = s
	m.setKey("description", s)
}

// SetTitle replaces the first "# " heading before the sections, or puts
// one at the top of the body.
func (m *Memory) SetTitle(s string) {
	s = SafeLine(s)
	pre := m.raw.secs[0].raw
	off := 0
	for _, l := range strings.SplitAfter(pre, "\n") {
		if strings.HasPrefix(l, "# ") {
			nl := ""
			if strings.HasSuffix(l, "\n") {
				nl = "\n"
			}
			m.raw.secs[0].raw = pre[:off] + "# " + s + nl + pre[off+len(l):]
			m.Title = s
			return
		}
		off += len(l)
	}
	if s == "" {
		return
	}
	if pre == "" && len(m.raw.secs) > 1 {
		pre = "\n"
	}
	if m.raw.fm != "" && !strings.HasSuffix(m.raw.fm, "\n") {
		m.raw.fm += "\n"
	}
	m.raw.secs[0].raw = "# " + s + "\n" + pre
	m.Title = s
}

// SetFact replaces the body of "## Fact", adding the section if missing.
func (m *Memory) SetFact(s string) {
	m.setSection(secFact, "Fact", s)
	m.Fact = strings.TrimSpace(s)
}

// SetEpisode replaces the body of "## Episode", adding the section if missing.
func (m *Memory) SetEpisode(s string) {
	m.setSection(secEpisode, "Episode", s)
	m.Episode = strings.TrimSpace(s)
}

// SetStatus sets the lifecycle status and superseded_by (removed when
// empty). Setting active on a file without a status key adds nothing.
func (m *Memory) SetStatus(s Status, supersededBy string) {
	supersededBy = SafeLine(supersededBy)
	if !(s == StatusActive || s == "") || m.hasKey("status") {
		if s == "" {
			s = StatusActive
		}
		m.setKey("status", string(s))
	}
	m.Front.Status = s
	m.setKey("superseded_by", supersededBy)
	m.Front.SupersededBy = supersededBy
}

// SetPinned sets pinned: true, or removes the key. (A file pinned by the
// reference's "## Pinned" section stays pinned until the section goes:
// the section is a person's text, and a mutator never deletes it.)
func (m *Memory) SetPinned(b bool) {
	line := ""
	if b {
		line = "pinned: true\n"
	}
	m.setKeyLine("pinned", line)
	m.Front.Pinned = b || m.findSection(secPinned) >= 0
}

// SetSupersedes sets the supersedes link (removed when empty).
func (m *Memory) SetSupersedes(s string) {
	s = SafeLine(s)
	m.setKey("supersedes", s)
	m.Front.Supersedes = s
}

// SetSource sets the provenance note (removed when empty).
func (m *Memory) SetSource(s string) {
	s = SafeLine(s)
	m.setKey("source", s)
	m.Front.Source = s
}

// SetKeywords sets the keywords list, one flow-style line like
// "keywords: [food, eat]" (removed when empty); words YAML would read as
// something else are quoted.
func (m *Memory) SetKeywords(words []string) {
	m.Front.Keywords = m.setList("keywords", words)
}

// setList sets key to a flow-style list of items, each one safe line
// (removed when none is left), and returns the items kept.
func (m *Memory) setList(key string, items []string) []string {
	var clean []string
	for _, w := range items {
		if w = SafeLine(w); w != "" {
			clean = append(clean, w)
		}
	}
	m.setKeyLine(key, yamlListLine(key, clean))
	return clean
}

// SetTags sets the tags list, one flow-style line like "tags: [decision]"
// (removed when empty).
func (m *Memory) SetTags(tags []string) {
	m.Front.Tags = m.setList("tags", tags)
}

// UseStamp reads one line of an access log: use is true for a use stamp
// ("used, DD.MM.YY", white space around it allowed), ok when its date is
// valid. The one reader of the stamp; AddUse writes it.
func UseStamp(line string) (when time.Time, use, ok bool) {
	d, use := strings.CutPrefix(strings.TrimSpace(line), "used,")
	if !use {
		return time.Time{}, false, false
	}
	when, err := time.Parse(DateLayout, strings.TrimSpace(d))
	return when, true, err == nil
}

// UseDates are the days of data's use stamps: the valid lines of its
// first "## Access log" section (a stamp elsewhere is ordinary text).
func UseDates(rel string, data []byte) []time.Time {
	m, _ := Parse(rel, data)
	if m == nil || len(m.raw.secs) == 0 {
		return nil
	}
	for _, s := range m.raw.secs[1:] {
		if s.name != secAccessLog {
			continue
		}
		var out []time.Time
		for _, l := range strings.Split(sectionBody(s.raw), "\n") {
			if when, use, ok := UseStamp(l); use && ok {
				out = append(out, when)
			}
		}
		return out
	}
	return nil
}

// AddUse appends "used, DD.MM.YY" to the access log, adding the section at
// the end of the file if missing.
func (m *Memory) AddUse(t time.Time) {
	line := "used, " + t.Format(DateLayout)
	i := m.findSection(secAccessLog)
	if i < 0 {
		m.appendSection("Access log", line)
	} else {
		head, body := splitHeading(m.raw.secs[i].raw)
		lead, mid, trail := splitBlank(body)
		if mid == "" {
			body = lead + line + orNewline(trail)
		} else {
			body = lead + mid + "\n" + line + orNewline(trail)
		}
		m.raw.secs[i].raw = head + body
	}
	d, _ := time.Parse(DateLayout, t.Format(DateLayout))
	m.Uses++
	if d.After(m.LastUsed) {
		m.LastUsed = d
	}
}

// NewMemory builds a fresh memory file in the seed format: frontmatter with
// description, status and created, a title, Fact, Episode (only when
// given) and an empty Access log as the last section, so that
// `echo "used, DD.MM.YY" >> file` appends a use.
func NewMemory(path, title, description, fact, episode string, created time.Time) *Memory {
	var b strings.Builder
	b.WriteString("---\n")
	b.WriteString(yamlLine("description", SafeLine(description)))
	b.WriteString("status: active\n")
	if !created.IsZero() {
		b.WriteString(yamlLine("created", created.Format(DateLayout)))
	}
	b.WriteString("---\n")
	title = SafeLine(title)
	if title == "" {
		title = SafeLine(description)
	}
	if title != "" {
		b.WriteString("# " + title + "\n\n")
	}
	b.WriteString("## Fact\n" + escapeBody(strings.TrimSpace(fact)) + "\n\n")
	if strings.TrimSpace(episode) != "" {
		b.WriteString("## Episode\n" + escapeBody(strings.TrimSpace(episode)) + "\n\n")
	}
	b.WriteString("## Access log\n")
	m, _ := Parse(path, []byte(b.String()))
	return m
}

func (m *Memory) hasKey(name string) bool {
	for _, k := range m.raw.keys {
		if k.name == name {
			return true
		}
	}
	return false
}

// setKey rewrites only the lines of one frontmatter key (or appends it
// before the closing "---"); value "" removes the key. The value is a
// string, quoted when YAML would read it as something else.
func (m *Memory) setKey(name, value string) {
	line := ""
	if value != "" {
		line = yamlLine(name, value)
	}
	m.setKeyLine(name, line)
}

// setKeyLine is setKey with the whole "key: value\n" line given ("" removes
// the key), for a value that is not a string (pinned: true).
func (m *Memory) setKeyLine(name, line string) {
	value := line
	if m.raw.fm == "" {
		if value == "" {
			return
		}
		m.raw.fm = "---\n---\n"
		m.raw.keys = nil
	}
	lines := strings.SplitAfter(m.raw.fm, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var repl []string
	if value != "" {
		repl = []string{line}
	}
	done := false
	for _, k := range m.raw.keys {
		if k.name == name && k.start >= 1 && k.end <= len(lines)-1 && k.start < k.end {
			lines = append(lines[:k.start], append(repl, lines[k.end:]...)...)
			done = true
			break
		}
	}
	if !done && value != "" {
		closing := len(lines) - 1
		// The closing line may lack a newline when the file is only frontmatter.
		if !strings.HasSuffix(lines[closing-1], "\n") {
			lines[closing-1] += "\n"
		}
		lines = append(lines[:closing], append(repl, lines[closing:]...)...)
	}
	m.raw.fm = strings.Join(lines, "")
	m.reindexKeys()
}

// reindexKeys recomputes key spans after the frontmatter text changed.
func (m *Memory) reindexKeys() {
	saved := m.Front
	m.parseFrontmatter()
	m.Front = saved
}

// findSection returns the index of the first section called name, or -1.
func (m *Memory) findSection(name string) int {
	for i, s := range m.raw.secs {
		if i > 0 && s.name == name {
			return i
		}
	}
	return -1
}

// setSection replaces the body of a section, keeping its heading line and
// the blank lines around the text, or inserts the section in seed order.
func (m *Memory) setSection(name, heading, text string) {
	text = escapeBody(strings.TrimSpace(text))
	i := m.findSection(name)
	if i < 0 {
		m.insertSection(name, heading, text)
		return
	}
	head, body := splitHeading(m.raw.secs[i].raw)
	lead, mid, trail := splitBlank(body)
	if mid == "" {
		lead, trail = "", body
	}
	if text == "" {
		m.raw.secs[i].raw = head + lead + orNewline(trail)
		return
	}
	m.raw.secs[i].raw = head + lead + text + orNewline(trail)
}

// insertSection adds a Fact or Episode section where the seed format puts
// it: Fact before Episode, both before the access log.
func (m *Memory) insertSection(name, heading, text string) {
	var before []string
	switch name {
	case secFact:
		before = []string{secEpisode, secAccessLog}
	case secEpisode:
		before = []string{secAccessLog}
	}
	at := len(m.raw.secs)
	for _, b := range before {
		if j := m.findSection(b); j >= 0 && j < at {
			at = j
		}
	}
	if at == len(m.raw.secs) {
		m.appendSection(heading, text)
		return
	}
	m.endWithBlankLine(at - 1)
	s := section{name: name, raw: "## " + heading + "\n" + text + "\n\n"}
	m.raw.secs = append(m.raw.secs[:at], append([]section{s}, m.raw.secs[at:]...)...)
}

// appendSection adds a section at the end of the file.
func (m *Memory) appendSection(heading, text string) {
	m.endWithBlankLine(len(m.raw.secs) - 1)
	raw := "## " + heading + "\n"
	if text != "" {
		raw += text + "\n"
	}
	m.raw.secs = append(m.raw.secs, section{name: strings.ToLower(heading), raw: raw})
}

// endWithBlankLine makes section i end with an empty line so the next
// heading stands apart, unless the file has nothing before it.
func (m *Memory) endWithBlankLine(i int) {
	s := &m.raw.secs[i]
	if s.raw == "" {
		if i == 0 && m.raw.fm != "" && !strings.HasSuffix(m.raw.fm, "\n") {
			m.raw.fm += "\n"
		}
		return
	}
	switch {
	case strings.HasSuffix(s.raw, "\n\n"):
	case strings.HasSuffix(s.raw, "\n"):
		s.raw += "\n"
	default:
		s.raw += "\n\n"
	}
}

// splitHeading splits a section into its heading line (with "\n") and body.
func splitHeading(raw string) (head, body string) {
	if i := strings.IndexByte(raw, '\n'); i >= 0 {
		return raw[:i+1], raw[i+1:]
	}
	return raw + "\n", ""
}

// splitBlank splits body into leading blank lines, the text, and the
// trailing whitespace starting at the newline after the text.
func splitBlank(body string) (lead, mid, trail string) {
	t := strings.TrimRight(body, " \t\r\n")
	if t == "" {
		return "", "", body
	}
	trail = body[len(t):]
	start := 0
	for {
		i := strings.IndexByte(t[start:], '\n')
		if i < 0 || strings.TrimSpace(t[start:start+i]) != "" {
			break
		}
		start += i + 1
	}
	return t[:start], t[start:], trail
}

func orNewline(s string) string {
	if s == "" {
		return "\n"
	}
	return s
}

// escapeBody keeps text we put into a section from starting a new section:
// a line beginning with "##" gets a backslash, which markdown hides.
func escapeBody(s string) string {
	if !strings.Contains(s, "##") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if _, ok := headingName(l + "\n"); ok {
			lines[i] = `\` + l
		}
	}
	return strings.Join(lines, "\n")
}

// lineAt returns the 1-based line of byte offset off.
func lineAt(data []byte, off int) int {
	if off > len(data) {
		off = len(data)
	}
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return 0
}
