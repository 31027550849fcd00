package memgraph

import (
	"strconv"
	"strings"
)

// RenderIndex renders user_memory.md / character_memory.md: a title, a short
// explanation, and one line per active memory in the given (rank) order with
// its path, description and use count. Retired memories are skipped even if
// the caller passes them.
func RenderIndex(kind Kind, ranked []*Memory) []byte {
	lines := make([][]byte, 0, len(ranked))
	for _, m := range ranked {
		if m.Active() {
			lines = append(lines, indexLine(m))
		}
	}
	return renderIndex(kind, lines)
}

func renderIndex(kind Kind, lines [][]byte) []byte {
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	i := 0
	return renderIndexWithin(kind, len(lines), size, 0, func() []byte {
		if i >= len(lines) {
			return nil
		}
		i++
		return lines[i-1]
	})
}

// FullIndexPath is where the mount shows, and watch mode writes (a
// git-ignored file), the index of kind with every memory, whatever the
// budget: .mindmount/index/user_memory.md.
func FullIndexPath(kind Kind) string {
	if kind == KindCharacter {
		return IndexDir + "/" + CharIndexFile
	}
	return IndexDir + "/" + UserIndexFile
}

// IndexDir holds the full indexes (synthesized; real files in watch mode).
const IndexDir = StateDir + "/index"

// renderIndexWithin renders an index of n entries (size bytes of lines in
// all, handed out by next in rank order) within maxBytes (0: no limit).
// When they do not all fit, the index ends with a footer line saying how
// many are not shown and how to reach them; lines are given back until
// the footer fits too.
func renderIndexWithin(kind Kind, n, size, maxBytes int, next func() []byte) []byte {
	head := indexHeader(kind, n)
	if maxBytes <= 0 || len(head)+size <= maxBytes {
		b := make([]byte, 0, len(head)+size)
		b = append(b, head...)
		for l := next(); l != nil; l = next() {
			b = append(b, l...)
		}
		return b
	}
	b := make([]byte, 0, maxBytes)
	b = append(b, head...)
	var ends []int
	for l := next(); l != nil && len(b)+len(l) <= maxBytes; l = next() {
		b = append(b, l...)
		ends = append(ends, len(b))
	}
	for {
		f := indexFooter(kind, n-len(ends), maxBytes)
		if len(b)+len(f) <= maxBytes || len(ends) == 0 {
			return append(b, f...)
		}
		ends = ends[:len(ends)-1]
		if len(ends) > 0 {
			b = b[:ends[len(ends)-1]]
		} else {
			b = b[:len(head)]
		}
	}
}

// indexFooter is the last line of a cut index.
func indexFooter(kind Kind, missing, maxBytes int) string {
	dir, name := UserDir, "user "
	if kind == KindCharacter {
		dir, name = CharacterDir, "character "
	}
	name += Plural(missing, "memory", "memories")
	return "\n<!-- mindmount: index cut at its budget of " + strconv.Itoa(maxBytes/BytesPerToken) + " tokens -->\n" +
		"… " + strconv.Itoa(missing) + " more " + name + " not shown. All of them: " + FullIndexPath(kind) +
		"; the files: ls " + dir + "/; search: cat .mindmount/search/<words>\n"
}

func indexHeader(kind Kind, n int) string {
	title, about, dir, file := "User memory", "about the user", UserDir, UserIndexFile
	if kind == KindCharacter {
		title, about, dir, file = "Character memory", "learned about how to talk to the user", CharacterDir, CharIndexFile
	}
	count := strconv.Itoa(n) + " active " + Plural(n, "memory", "memories")
	var b strings.Builder
	b.WriteString("# " + title + "\n\n")
	b.WriteString("<!-- " + file + " is synthesized by mindmount from " + dir + "/; edits to it are not saved -->\n\n")
	b.WriteString(count + " " + about + ", most used first. Each line: file, description, uses.\n")
	b.WriteString("Open a file for the full fact; append \"used, DD.MM.YY\" to its Access log when you use it.\n\n")
	if n == 0 {
		b.WriteString("(none yet)\n")
	}
	return b.String()
}

// indexLine is one index entry: "- path — description (uses: N)".
func indexLine(m *Memory) []byte {
	desc := SafeLine(m.Front.Description)
	if desc == "" {
		desc = SafeLine(m.Title)
	}
	if desc == "" {
		desc = "(no description)"
	}
	return []byte("- " + SafeLine(m.Path) + " — " + desc + " (uses: " + strconv.Itoa(m.Uses) + ")\n")
}
