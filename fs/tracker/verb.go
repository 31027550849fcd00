package tracker

import (
	"fmt"
	"strings"
)

// retitle says verb instead of "update" in the subject of msg, a one-file
// commit's message (message): what the writer did, which the file's diff
// alone calls an update ("mcp: use user_memory/x.md", "mcp: retire
// user_memory/x.md"). Any other message, or an empty verb, is kept.
func retitle(msg string, entries []entry, verb string) string {
	if verb == "" || len(entries) != 1 || entries[0].op != opModify || strings.ContainsAny(verb, "\n\r") {
		return msg
	}
	e := entries[0]
	old := fmt.Sprintf("%s: %s %s\n", e.writer, verbs[opModify], quote(e.path))
	rest, ok := strings.CutPrefix(msg, old)
	if !ok {
		return msg
	}
	return fmt.Sprintf("%s: %s %s\n", e.writer, verb, quote(e.path)) + rest
}
