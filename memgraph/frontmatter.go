package memgraph

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mindmount/mindmount/memgraph/secret"
	"gopkg.in/yaml.v3"
)

// knownKeys are the frontmatter keys mindmount understands; any other key makes
// a file invalid, so that a typo ("descripton") never silently drops data.
var knownKeys = []string{"description", "status", "supersedes", "superseded_by", "read_only", "pinned", "created", "source", "tags", "topic", "keywords", "promoted_from"}

var allowedKeysText = strings.Join(knownKeys, ", ")

var yamlLineRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// parseFrontmatter decodes m.raw.fm into m.Front and records the line span
// of every top-level key for setKey. Lines in problems are file lines: the
// opening "---" is line 1.
func (m *Memory) parseFrontmatter() (probs []Problem) {
	m.Front = Frontmatter{}
	m.raw.keys = m.raw.keys[:0]
	m.raw.bad = false
	add := func(line int, format string, args ...any) {
		probs = append(probs, Problem{Path: m.Path, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	lines := strings.SplitAfter(m.raw.fm, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	closing := len(lines) - 1
	if closing < 1 {
		return nil
	}
	if !noFastPath && m.fastFrontmatter(lines[1:closing]) {
		return nil
	}
	doc, ok := decodeYAML(strings.Join(lines[1:closing], ""), add)
	if !ok {
		m.raw.bad = true
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return probs
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		add(top.Line+1, "frontmatter must be a list of 'key: value' lines (allowed keys: %s)", allowedKeysText)
		return probs
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		line := k.Line + 1
		name := k.Value
		if k.Kind != yaml.ScalarNode {
			add(line, "frontmatter keys must be plain words (allowed keys: %s)", allowedKeysText)
			continue
		}
		start, end := keySpan(top, i, lines, closing)
		m.raw.keys = append(m.raw.keys, fmKey{name: name, start: start, end: end})
		if prev, dup := seen[name]; dup {
			add(line, "frontmatter key %s appears twice (first on line %d); keep one", keyName(name), prev)
			continue
		}
		seen[name] = line
		m.setField(name, v, line, add)
	}
	if _, ok := seen["description"]; ok && strings.TrimSpace(m.Front.Description) == "" {
		if k := KindOf(m.Path); k == KindUser || k == KindCharacter {
			add(seen["description"], "description is empty; write one line saying what this memory is about")
		}
	}
	return probs
}

// problemFunc records a problem at a file line.
type problemFunc func(line int, format string, args ...any)

// decodeYAML parses the frontmatter's YAML (src, which starts on file line
// 2). ok is false, with the problem added, when it is not YAML.
func decodeYAML(src string, add problemFunc) (doc yaml.Node, ok bool) {
	// yaml.v3 has panicked on hostile input in the past; a memory file
	// must never take the daemon down.
	defer func() {
		if r := recover(); r != nil {
			add(2, "frontmatter could not be read as YAML")
			doc, ok = yaml.Node{}, false
		}
	}()
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		line, msg := 2, err.Error()
		if mm := yamlLineRe().FindStringSubmatch(msg); mm != nil {
			n, _ := strconv.Atoi(mm[1])
			line, msg = n+1, mm[2]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		add(line, "frontmatter is not valid YAML: %s", unquoted(msg, src))
		return yaml.Node{}, false
	}
	return doc, true
}

// keySpan returns the lines [start, end) of the i-th key of top: its line
// up to the next key, less the blank and comment lines before that key
// (they belong to no key and stay when setKey rewrites this one).
func keySpan(top *yaml.Node, i int, lines []string, closing int) (start, end int) {
	start = top.Content[i].Line
	end = closing
	if i+2 < len(top.Content) {
		end = top.Content[i+2].Line
	}
	for end-1 > start && end-1 < len(lines) && isBlankOrComment(lines[end-1]) {
		end--
	}
	if end <= start {
		end = start + 1
	}
	return start, end
}

// setField decodes the value v of key name (on line) into m.Front, or
// records why it cannot.
func (m *Memory) setField(name string, v *yaml.Node, line int, add problemFunc) {
	if p := m.Front.textField(name); p != nil {
		s, ok := scalarText(v)
		if !ok {
			add(line, "%s must be a single line of text", name)
			return
		}
		if (name == "supersedes" || name == "superseded_by") && !linkOK(s) {
			add(v.Line+1, "%s must name a memory inside the repository, like user_memory/likes-tea", name)
			return
		}
		*p = s
		return
	}
	switch name {
	case "status":
		s, _ := scalarText(v)
		switch st := Status(strings.TrimSpace(s)); st {
		case StatusActive, StatusSuperseded, StatusRetracted, StatusContradicted:
			m.Front.Status = st
		default:
			add(v.Line+1, "status must be one of active, superseded, retracted, contradicted")
		}
	case "read_only":
		var b bool
		if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
			add(v.Line+1, "read_only must be true or false")
			return
		}
		m.Front.ReadOnly = b
	case "pinned":
		var b bool
		if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
			add(v.Line+1, "pinned must be true or false, not %q", v.Value)
			return
		}
		m.Front.Pinned = b
	case "topic":
		s, ok := scalarText(v)
		if !ok || !ValidTopic(s) {
			add(v.Line+1, "topic must be a short lower-case slug naming what the memory is about, like home-city or diet (at most %d characters of a-z, 0-9 and -)", MaxTopicLen)
			return
		}
		m.Front.Topic = s
	case "tags":
		setWords(&m.Front.Tags, name, v, line, add)
	case "keywords":
		// The search terms extraction found for the memory, words a
		// question may use that the text does not (recall).
		setWords(&m.Front.Keywords, name, v, line, add)
	default:
		add(line, "unknown frontmatter key %s; allowed keys are %s", keyName(name), allowedKeysText)
	}
}

// textField is the field of a single-line text key, or nil for another key.
func (f *Frontmatter) textField(name string) *string {
	switch name {
	case "description":
		return &f.Description
	case "supersedes":
		return &f.Supersedes
	case "superseded_by":
		return &f.SupersededBy
	case "created":
		return &f.Created
	case "source":
		return &f.Source
	case "promoted_from":
		return &f.PromotedFrom
	}
	return nil
}

// setWords appends a list key's words: a YAML list, or one comma-separated
// line.
func setWords(list *[]string, name string, v *yaml.Node, line int, add problemFunc) {
	switch v.Kind {
	case yaml.SequenceNode:
		for _, t := range v.Content {
			s, ok := scalarText(t)
			if !ok {
				add(t.Line+1, "each of %s must be a word or short phrase", name)
				continue
			}
			*list = append(*list, s)
		}
	case yaml.ScalarNode:
		for _, t := range strings.Split(v.Value, ",") {
			if t = strings.TrimSpace(t); t != "" {
				*list = append(*list, t)
			}
		}
	default:
		add(line, "%s must be a list like [coffee, mornings]", name)
	}
}

// scalarText returns the text of a scalar node; null is "".
func scalarText(v *yaml.Node) (string, bool) {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if v.Kind != yaml.ScalarNode {
		return "", false
	}
	if v.Tag == "!!null" {
		return "", true
	}
	return v.Value, true
}

// isBlankOrComment reports a blank line or a comment at the start of a
// line (an indented "#" may be text inside a block scalar).
func isBlankOrComment(line string) bool {
	return strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#")
}

// yamlLine renders one "key: value" line, quoting the value when YAML needs it.
func yamlLine(key, value string) string {
	n := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: key},
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: value},
	}}
	b, err := yaml.Marshal(n)
	if err != nil || strings.Count(string(b), "\n") != 1 {
		return key + ": " + strconv.Quote(value) + "\n"
	}
	return string(b)
}

// yamlListLine renders one "key: [a, b]" line of strings ("" for none).
func yamlListLine(key string, values []string) string {
	if len(values) == 0 {
		return ""
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, v := range values {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v})
	}
	n := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: key}, seq}}
	b, err := yaml.Marshal(n)
	if err != nil || strings.Count(string(b), "\n") != 1 {
		quoted := make([]string, len(values))
		for i, v := range values {
			quoted[i] = strconv.Quote(v)
		}
		return key + ": [" + strings.Join(quoted, ", ") + "]\n"
	}
	return string(b)
}

// noFastPath forces every frontmatter through yaml.v3 (tests compare both).
var noFastPath = false

// fastFrontmatter handles the frontmatter mindmount itself writes — one
// "key: plain value" line per known key — without yaml.v3, which costs
// more than the rest of parsing a memory together. It returns false,
// having changed nothing, for anything else (comments, blank lines,
// quoting, lists, unknown or repeated keys, bad values, characters YAML
// treats specially); the full parser then decides.
func (m *Memory) fastFrontmatter(lines []string) bool {
	var f Frontmatter
	var keys []fmKey
	var seen [16]bool // one per knownKeys entry
	for i, l := range lines {
		key, v, ok := plainLine(l)
		if !ok {
			return false
		}
		k := slices.Index(knownKeys, key)
		if k < 0 || seen[k] || !f.setPlain(key, v) {
			return false
		}
		seen[k] = true
		keys = append(keys, fmKey{name: key, start: i + 1, end: i + 2})
	}
	m.Front = f
	m.raw.keys = append(m.raw.keys[:0], keys...)
	return true
}

// plainLine splits a "key: plain value" line; ok is false for any other
// shape (see plainSafe).
func plainLine(l string) (key, v string, ok bool) {
	l = strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
	colon := strings.IndexByte(l, ':')
	if colon <= 0 || colon+1 < len(l) && l[colon+1] != ' ' {
		return "", "", false
	}
	key = l[:colon]
	for j := 0; j < len(key); j++ {
		if c := key[j]; !(c >= 'a' && c <= 'z' || c == '_') {
			return "", "", false
		}
	}
	v = strings.TrimRight(l[colon+1:], " ")
	if v == "" || v[0] != ' ' {
		return "", "", false
	}
	v = v[1:]
	return key, v, plainSafe(v)
}

// setPlain sets key from a plain value as the full parser would; false
// when the value is not one the fast path may decide.
func (f *Frontmatter) setPlain(key, v string) bool {
	if p := f.textField(key); p != nil {
		if (key == "supersedes" || key == "superseded_by") && !linkOK(v) {
			return false
		}
		*p = v
		return true
	}
	switch key {
	case "status":
		switch st := Status(v); st {
		case StatusActive, StatusSuperseded, StatusRetracted, StatusContradicted:
			f.Status = st
			return true
		}
	case "topic":
		if ValidTopic(v) {
			f.Topic = v
			return true
		}
	case "read_only", "pinned":
		b := &f.ReadOnly
		if key == "pinned" {
			b = &f.Pinned
		}
		switch v {
		case "true":
			*b = true
			return true
		case "false":
			return true
		}
	}
	return false // tags, keywords, a bad value
}

// plainSafe reports whether YAML reads v, written after "key: ", as a plain
// string equal to v (no indicator, comment, quote, null or special
// character).
func plainSafe(v string) bool {
	if v == "" || strings.ContainsRune("-?:,[]{}#&*!|>'\"%@` ", rune(v[0])) {
		return false
	}
	switch v {
	case "null", "Null", "NULL", "~":
		return false
	}
	if strings.Contains(v, ": ") || strings.Contains(v, " #") || strings.HasSuffix(v, ":") {
		return false
	}
	for _, r := range v {
		switch {
		case r >= 0x20 && r <= 0x7e:
		case r >= 0xa0 && r <= 0xd7ff && r != 0x2028 && r != 0x2029:
		case r >= 0xe000 && r < 0xfffd && r != 0xfeff: // U+FFFD also stands for invalid UTF-8
		case r >= 0x10000 && r <= 0x10ffff:
		default:
			return false
		}
	}
	return true
}

// linkOK reports whether a supersedes/superseded_by value names a path
// inside the repository (with or without ".md"); empty is fine.
func linkOK(s string) bool {
	if s == "" {
		return true
	}
	return isCleanRel(s) && !strings.HasPrefix(s, ".")
}

// Messages about a file never quote its values or content — a value may be
// a secret, and a message reaches the log and the status file. They name
// the key and the line instead.

// keyName is a frontmatter or settings key as a message may show it:
// quoted when it is a plain identifier (the usual typo, "colour"), else a
// description — a "key" can be anything written before a colon.
func keyName(k string) string {
	if len(k) == 0 || len(k) > 32 || !plainKeyRe().MatchString(k) || secret.Contains(k) {
		return "(not shown: not a plain word)"
	}
	return strconv.Quote(k)
}

var plainKeyRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_\-]*$`) })

// unquoted drops what a parser's message quotes from src, the input.
func unquoted(msg, src string) string {
	return quotedRe().ReplaceAllStringFunc(msg, func(q string) string {
		if strings.Contains(src, q[1:len(q)-1]) {
			return "…"
		}
		return q
	})
}

// Quoted punctuation (",", "]") is the parser's own and stays.
var quotedRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("'[^']{4,}'|\"[^\"]{4,}\"|`[^`]{4,}`") })
