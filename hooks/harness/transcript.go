package harness

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mindmount/mindmount/consolidate"
)

// line is the union of the transcript line shapes we read:
//
//   - Claude Code: {"type":"user"|"assistant", "isSidechain":..., "isMeta":...,
//     "message":{"role":..., "content": string | [parts]}, ...}
//   - chat JSONL (OpenAI style, what "mindmount run" agents often write):
//     {"role":..., "content": string | [parts]}
//   - Gemini CLI records: {"type":"user"|"gemini", "content": string | [parts]}
//   - Codex rollout lines: {"type":"response_item","payload":{"type":"message",...}}
type line struct {
	Type        string          `json:"type"`
	Role        string          `json:"role"`
	Content     json.RawMessage `json:"content"`
	IsSidechain bool            `json:"isSidechain"`
	IsMeta      bool            `json:"isMeta"`
	Message     *struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	// Codex rollout files: {"type":"response_item","payload":{"type":"message","role":...,"content":[...]}}
	Payload *struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"payload"`
}

// ConvertLine turns one line of a harness's transcript into the message
// consolidation should see (consolidate.Line, its one transcript line), or reports false for everything that is not a user's or an
// assistant's own words: tool calls and tool results, thinking, system
// and summary records, sub-agent (sidechain) turns, slash-command echoes,
// and lines that do not parse. It never panics.
func ConvertLine(raw []byte) (consolidate.Line, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return consolidate.Line{}, false
	}
	var l line
	if json.Unmarshal(raw, &l) != nil || l.IsSidechain || l.IsMeta {
		return consolidate.Line{}, false
	}
	role, content := l.Role, l.Content
	if l.Message != nil && (role == "" || len(content) == 0) {
		role, content = l.Message.Role, l.Message.Content
	}
	if l.Type == "response_item" && l.Payload != nil && l.Payload.Type == "message" {
		role, content = l.Payload.Role, l.Payload.Content
	}
	if role == "" {
		role = l.Type // Gemini CLI records name the speaker in "type"
	}
	var r consolidate.Role
	switch strings.ToLower(role) {
	case "user", "human":
		r = consolidate.RoleUser
	case "assistant", "gemini", "model":
		r = consolidate.RoleAssistant
	default:
		return consolidate.Line{}, false // system, tool, summary, snapshots, ...
	}
	text := partsText(content)
	if text == "" || isNoise(text) {
		return consolidate.Line{}, false
	}
	return consolidate.Line{Role: r, Content: text}, true
}

// partsText returns the text of a content field: a string, or the text
// parts of a list ({"type":"text","text":...}, Gemini's {"text":...}).
// tool_use, tool_result, thinking, images and files are left out.
func partsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return ""
		}
		return strings.TrimSpace(s)
	case '[':
		var parts []json.RawMessage
		if json.Unmarshal(raw, &parts) != nil {
			return ""
		}
		var texts []string
		for _, p := range parts {
			if t := partText(p); t != "" {
				texts = append(texts, t)
			}
		}
		return strings.Join(texts, "\n")
	}
	return ""
}

func partText(p json.RawMessage) string {
	if len(p) > 0 && p[0] == '"' {
		var s string
		if json.Unmarshal(p, &s) != nil {
			return ""
		}
		return strings.TrimSpace(s)
	}
	var part struct {
		Type *string `json:"type"`
		Text string  `json:"text"`
	}
	if json.Unmarshal(p, &part) != nil {
		return ""
	}
	if part.Type != nil {
		switch *part.Type {
		case "text", "input_text", "output_text":
		default:
			return "" // tool_use, tool_result, thinking, image, document
		}
	}
	return strings.TrimSpace(part.Text)
}

// isNoise reports text a harness puts in a user turn that the user did not
// say: slash-command echoes and their output, interrupt markers, and
// system reminders.
func isNoise(text string) bool {
	for _, p := range []string{"<command-name>", "<command-message>", "<command-args>", "<local-command-stdout>", "<local-command-stderr>", "<system-reminder>", "[Request interrupted by user",
		"<environment_context>", "<user_instructions>", "# AGENTS.md instructions"} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// document is a whole-file transcript: Gemini CLI's session JSON, or a
// chat export, {"messages":[...]} with one record per element.
type document struct {
	Messages []json.RawMessage `json:"messages"`
}

// ParseDocument reads a whole-file JSON transcript and returns its
// records (each then read by ConvertLine) or false when data is not one.
func ParseDocument(data []byte) ([]json.RawMessage, bool) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, false
	}
	var d document
	if json.Unmarshal(data, &d) != nil || d.Messages == nil {
		return nil, false
	}
	return d.Messages, true
}
