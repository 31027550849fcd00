package consolidate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mindmount/mindmount/memgraph"
)

// Role is who said a message. Only user and assistant messages are shown to
// the model; system and tool messages are never facts about the user.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
	RoleDocument  Role = "document" // a whole non-chat file (notes, a PR description)
)

// Message is one unit of a transcript. Messages are numbered from 1 in the
// order they appear; the cursor counts them.
type Message struct {
	Role Role
	Text string
	Line int // 1-based line where the message starts
}

// Conversational reports whether the message may carry facts.
func (m Message) Conversational() bool {
	return m.Role == RoleUser || m.Role == RoleAssistant || m.Role == RoleDocument
}

// LineProblem is a transcript line that could not be read. It is reported
// and skipped; it never stops the rest of the file.
type LineProblem struct {
	Path string
	Line int
	Msg  string
}

func (p LineProblem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Msg)
	}
	return p.Path + ": " + p.Msg
}

// Transcript is a parsed transcript file.
type Transcript struct {
	Path     string
	Format   string // "jsonl", "turns" or "document"
	Messages []Message
	Problems []LineProblem
	// Partial is true when a JSONL file ends in an unterminated line that
	// does not parse yet: a writer is still appending, so the line is left
	// for the next run instead of being reported as malformed.
	Partial bool

	data []byte // the file as parsed, for Provenance
}

// ParseTranscript reads a transcript in whichever format it is written:
// JSONL chat messages, markdown or plain text with "User:" / "Assistant:"
// turns, or any other text as one document. It never panics and never
// fails: unreadable parts are reported in Problems.
func ParseTranscript(rel string, data []byte) *Transcript {
	t := &Transcript{Path: rel, data: data}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		t.Format = "document"
		t.Problems = append(t.Problems, LineProblem{Path: rel, Msg: "not UTF-8 text; skipped"})
		return t
	}
	ext := strings.ToLower(path.Ext(rel))
	switch {
	case ext == ".jsonl" || ext == ".ndjson" || (ext != ".md" && ext != ".txt" && ext != ".markdown" && looksLikeJSONL(data)):
		t.Format = "jsonl"
		parseJSONL(t, data)
	case hasTurns(data):
		t.Format = "turns"
		parseTurns(t, data)
	default:
		t.Format = "document"
		if text := strings.TrimSpace(string(data)); text != "" {
			t.Messages = []Message{{Role: RoleDocument, Text: text, Line: 1}}
		}
	}
	return t
}

func looksLikeJSONL(data []byte) bool {
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var probe map[string]json.RawMessage
		if json.Unmarshal(line, &probe) != nil {
			return false
		}
		_, hasRole := probe["role"]
		_, hasMsg := probe["message"]
		return hasRole || hasMsg
	}
	return false
}

// jsonlLine is the subset of a chat message we read. Claude-Code style lines
// nest the message under "message"; both shapes are accepted.
type jsonlLine struct {
	Role    *string         `json:"role"`
	Content json.RawMessage `json:"content"`
	Message *struct {
		Role    *string         `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

func parseJSONL(t *Transcript, data []byte) {
	lines := bytes.Split(data, []byte("\n"))
	for i, raw := range lines {
		lineNo := i + 1
		last := i == len(lines)-1
		line := bytes.TrimSpace(raw)
		if len(line) == 0 {
			continue
		}
		var l jsonlLine
		if err := json.Unmarshal(line, &l); err != nil {
			if last {
				// No trailing newline and not valid yet: still being written.
				t.Partial = true
				return
			}
			t.Problems = append(t.Problems, LineProblem{t.Path, lineNo, "not a JSON object: " + memgraph.ClipLine(err.Error(), 120)})
			continue
		}
		role, content := l.Role, l.Content
		if role == nil && l.Message != nil {
			role, content = l.Message.Role, l.Message.Content
		}
		if role == nil {
			t.Problems = append(t.Problems, LineProblem{t.Path, lineNo, `missing "role"`})
			continue
		}
		r, ok := normalizeRole(*role)
		if !ok {
			t.Problems = append(t.Problems, LineProblem{t.Path, lineNo, fmt.Sprintf("unknown role %q", memgraph.ClipLine(*role, 40))})
			continue
		}
		text, err := contentText(content)
		if err != nil {
			t.Problems = append(t.Problems, LineProblem{t.Path, lineNo, err.Error()})
			continue
		}
		t.Messages = append(t.Messages, Message{Role: r, Text: text, Line: lineNo})
	}
}

// contentText accepts a string, null, or a list of parts of which the text
// parts ({"type":"text","text":...}) are joined; images and tool calls are
// ignored.
func contentText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf(`"content" is not a valid string`)
		}
		return strings.TrimSpace(s), nil
	case '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", fmt.Errorf(`"content" is not a list of parts`)
		}
		var texts []string
		for _, p := range parts {
			var part struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if len(p) > 0 && p[0] == '"' {
				var s string
				if json.Unmarshal(p, &s) == nil && strings.TrimSpace(s) != "" {
					texts = append(texts, strings.TrimSpace(s))
				}
				continue
			}
			if json.Unmarshal(p, &part) != nil {
				continue
			}
			switch part.Type {
			case "text", "input_text", "output_text":
				if s := strings.TrimSpace(part.Text); s != "" {
					texts = append(texts, s)
				}
			}
		}
		return strings.Join(texts, "\n"), nil
	}
	return "", fmt.Errorf(`"content" must be a string or a list of {"type":"text","text":...} parts`)
}

func normalizeRole(s string) (Role, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "user", "human":
		return RoleUser, true
	case "assistant", "ai", "model", "bot":
		return RoleAssistant, true
	case "system", "developer":
		return RoleSystem, true
	case "tool", "function", "ipython":
		return RoleTool, true
	}
	return "", false
}

// turnRE matches a turn marker at the start of a line: "User: hi",
// "**User:** hi", "**User**: hi", "## User", "### Assistant:".
var turnRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(?:(#{1,6})[ \t]+)?(?:\*\*|__)?(user|human|assistant|ai|system|tool)(?:\*\*|__)?[ \t]*(:)?[ \t]*(?:\*\*|__)?[ \t]*(.*)$`)
})

// turn returns the role and the rest of the line when line opens a turn.
// A bare word ("User said …") is not a turn: it needs a colon or a heading.
func turn(line string) (Role, string, bool) {
	m := turnRE().FindStringSubmatch(line)
	if m == nil {
		return "", "", false
	}
	heading, colon, rest := m[1] != "", m[3] != "", m[4]
	if !colon && !(heading && strings.TrimSpace(rest) == "") {
		return "", "", false
	}
	r, ok := normalizeRole(m[2])
	return r, strings.TrimSpace(rest), ok
}

func hasTurns(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		if r, _, ok := turn(strings.TrimRight(line, "\r")); ok && (r == RoleUser || r == RoleAssistant) {
			return true
		}
	}
	return false
}

func parseTurns(t *Transcript, data []byte) {
	var cur *Message
	var buf []string
	flush := func() {
		if cur != nil {
			cur.Text = strings.TrimSpace(strings.Join(buf, "\n"))
			t.Messages = append(t.Messages, *cur)
		}
		cur, buf = nil, nil
	}
	var preamble []string
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if r, rest, ok := turn(line); ok {
			flush()
			cur = &Message{Role: r, Line: i + 1}
			if rest != "" {
				buf = append(buf, rest)
			}
			continue
		}
		if cur == nil {
			preamble = append(preamble, line)
			continue
		}
		buf = append(buf, line)
	}
	flush()
	// Text before the first turn (a title, a date) is context, not a message
	// of anyone: keep it as a document only when it says something.
	if pre := strings.TrimSpace(strings.Join(preamble, "\n")); pre != "" && len(t.Messages) > 0 {
		t.Messages = append([]Message{{Role: RoleDocument, Text: pre, Line: 1}}, t.Messages...)
	}
}

// PrefixHash returns a hash of the first n messages. The cursor stores it so
// a transcript rewritten under an advanced cursor is noticed instead of
// silently skipping its new content.
func PrefixHash(msgs []Message, n int) string {
	h := sha256.New()
	for i := 0; i < n && i < len(msgs); i++ {
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00", msgs[i].Role, len(msgs[i].Text), msgs[i].Text)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
