package memgraph

import "strings"

// Part is one named piece of a memory file: a frontmatter key with its
// lines, or a section with its heading line.
type Part struct {
	Name string // key name, or lower-cased heading text; "" for text outside any
	Raw  string // the exact bytes, newlines included
}

// Parts is a memory file cut where Parse cuts it, for tools that combine
// versions of a file piece by piece (the merge driver in package hooks).
// Join gives the original bytes back for every input.
type Parts struct {
	Open  string // the frontmatter's opening line ("---\n"); "" without frontmatter
	Keys  []Part // top-level keys in order; a comment or blank line goes with the key after it
	Close string // the closing delimiter line, and any lines after the last key before it
	// Sections[0] is the preamble (title and anything before the first
	// "## "); the others start with their heading line.
	Sections []Part
}

// SplitParts cuts data (the content of path) into Parts.
func SplitParts(path string, data []byte) Parts {
	m, _ := Parse(path, data)
	var p Parts
	if fm := m.raw.fm; fm != "" {
		lines := strings.SplitAfter(fm, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		p.Open = lines[0]
		next := 1
		for _, k := range m.raw.keys {
			if k.start < next || k.end > len(lines)-1 || k.end <= k.start {
				continue // cannot happen for spans Parse produced; keep Join exact regardless
			}
			p.Keys = append(p.Keys, Part{Name: k.name, Raw: strings.Join(lines[next:k.end], "")})
			next = k.end
		}
		p.Close = strings.Join(lines[next:], "")
	}
	for _, s := range m.raw.secs {
		p.Sections = append(p.Sections, Part{Name: s.name, Raw: s.raw})
	}
	return p
}

// Join renders the parts back into file bytes.
func (p Parts) Join() []byte {
	var b strings.Builder
	b.WriteString(p.Open)
	for _, k := range p.Keys {
		b.WriteString(k.Raw)
	}
	b.WriteString(p.Close)
	for _, s := range p.Sections {
		b.WriteString(s.Raw)
	}
	return []byte(b.String())
}
