package harness

import (
	"bytes"
	"fmt"
	"strings"
)

// The instructions block mindmount adds to a harness's instruction file
// (AGENTS.md, GEMINI.md) sits between these lines, so uninstall removes
// exactly it and a reinstall replaces it.
const (
	blockBegin = "<!-- mindmount:begin (added by \"mindmount hooks install\"; \"mindmount hooks uninstall\" removes it) -->"
	blockEnd   = "<!-- mindmount:end -->"
)

// Instructions is what an agent without a session-start hook is told about
// its memory.
func Instructions(memory string, mcp bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## Long-term memory (mindmount)\n\n")
	fmt.Fprintf(&b, "Your long-term memory about the user is the folder `%s`: markdown files in git.\n\n", memory)
	fmt.Fprintf(&b, "- At the start of a task, read `%s/CONTEXT.md` (who the user is, what you learned about them, and a list of further memory files to open when relevant).\n", memory)
	fmt.Fprintf(&b, "- To remember a fact about the user, write `%s/user_memory/<short-slug>.md` with frontmatter `description: <one line>` and the sections `## Fact` and `## Episode`. Every change is a git commit, so nothing is lost.\n", memory)
	if mcp {
		fmt.Fprintf(&b, "- The `mindmount` MCP server offers the same memory as tools.\n")
	}
	return b.String()
}

// blockEdit adds (or, uninstalling, removes) the instructions block in a
// markdown instruction file, leaving every other line as it was.
func blockEdit(path, note, body string, uninstall bool) edit {
	onlyOurs := func(old []byte) bool {
		rest, err := removeBlock(old)
		return err == nil && len(bytes.TrimSpace(rest)) == 0
	}
	return edit{path: path, note: note, onlyOurs: onlyOurs, change: func(old []byte) ([]byte, error) {
		rest, err := removeBlock(old)
		if err != nil {
			return nil, err
		}
		if uninstall {
			if old != nil && len(bytes.TrimSpace(rest)) == 0 {
				return nil, nil // we created it
			}
			return rest, nil
		}
		var b bytes.Buffer
		b.Write(rest)
		if len(rest) > 0 {
			if !bytes.HasSuffix(rest, []byte("\n")) {
				b.WriteByte('\n')
			}
			b.WriteByte('\n')
		}
		b.WriteString(blockBegin + "\n" + strings.TrimRight(body, "\n") + "\n" + blockEnd + "\n")
		return b.Bytes(), nil
	}}
}

// removeBlock returns data without mindmount's block and the blank line put
// before it (a last line that had no newline keeps the one install gave it). A begin marker without an end marker is an error: the user
// edited the block, and guessing where it ends could delete their text.
func removeBlock(data []byte) ([]byte, error) {
	rest, err := cutBlock(data, blockBegin, blockEnd)
	if err != nil {
		return nil, err
	}
	return removeLegacyBlock(rest)
}

// cutBlock removes the lines from begin to end, and the blank line before.
func cutBlock(data []byte, blockBegin, blockEnd string) ([]byte, error) {
	i := bytes.Index(data, []byte(blockBegin))
	if i < 0 {
		return data, nil
	}
	j := bytes.Index(data[i:], []byte(blockEnd))
	if j < 0 {
		return nil, fmt.Errorf("mindmount's block has a begin line and no end line %q; fix it by hand", blockEnd)
	}
	end := i + j + len(blockEnd)
	if end < len(data) && data[end] == '\n' {
		end++
	}
	before := data[:i]
	// The separator install added: one blank line before the block.
	if bytes.HasSuffix(before, []byte("\n\n")) {
		before = before[:len(before)-1]
	}
	out := append(append([]byte(nil), before...), data[end:]...)
	return out, nil
}
