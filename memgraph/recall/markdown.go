package recall

import (
	"fmt"
	"strings"
)

// Markdown renders hits as the text of .engram/search/<query> in the mount:
// a heading with the question, then one numbered item per memory with its
// repo-relative path, description, lifecycle status when retired, and the
// best-matching sentence. Paths are plain text, not links, because the
// file is read from .engram/search/ where relative links would point
// nowhere.
func Markdown(q string, hits []Hit) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Recall: %s\n\n", oneLine(q))
	if len(hits) == 0 {
		b.WriteString("No active memory matches.\n")
		return []byte(b.String())
	}
	for i, h := range hits {
		status := ""
		if h.Status != "" && h.Status != "active" {
			status = " [" + h.Status + "]"
		}
		fmt.Fprintf(&b, "%d. %s%s — %s\n", i+1, h.Path, status, oneLine(h.Description))
		if h.Snippet != "" && h.Snippet != h.Description {
			fmt.Fprintf(&b, "   > %s\n", oneLine(h.Snippet))
		}
	}
	return []byte(b.String())
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
