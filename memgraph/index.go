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
	head := indexHeader(kind, len(lines))
	n := len(head)
	for _, l := range lines {
		n += len(l)
	}
	b := make([]byte, 0, n)
	b = append(b, head...)
	for _, l := range lines {
		b = append(b, l...)
	}
	return b
}

func indexHeader(kind Kind, n int) string {
	title, about, dir, file := "User memory", "about the user", UserDir, UserIndexFile
	if kind == KindCharacter {
		title, about, dir, file = "Character memory", "learned about how to talk to the user", CharacterDir, CharIndexFile
	}
	count := strconv.Itoa(n) + " active memories"
	if n == 1 {
		count = "1 active memory"
	}
	var b strings.Builder
	b.WriteString("# " + title + "\n\n")
	b.WriteString("<!-- " + file + " is synthesized by engram from " + dir + "/; edits to it are not saved -->\n\n")
	b.WriteString(count + " " + about + ", most used first. Each line: file, description, uses.\n")
	b.WriteString("Open a file for the full fact; append \"used, DD.MM.YY\" to its Access log when you use it.\n\n")
	if n == 0 {
		b.WriteString("(none yet)\n")
	}
	return b.String()
}

// indexLine is one index entry: "- path — description (uses: N)".
func indexLine(m *Memory) []byte {
	desc := oneLine(m.Front.Description)
	if desc == "" {
		desc = oneLine(m.Title)
	}
	if desc == "" {
		desc = "(no description)"
	}
	return []byte("- " + m.Path + " — " + desc + " (uses: " + strconv.Itoa(m.Uses) + ")\n")
}
