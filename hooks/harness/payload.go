package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mindmount/mindmount/memgraph"
)

// MaxPayload bounds what a hook reads from stdin. Payloads are a few
// hundred bytes; a UserPromptSubmit payload carries the prompt.
const MaxPayload = 1 << 20

// Payload is the JSON a harness writes to a hook's stdin. Claude Code,
// Gemini CLI and Codex share these field names.
type Payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	CWD            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Source         string `json:"source"` // SessionStart: startup, resume, clear, compact
	Prompt         string `json:"prompt"` // UserPromptSubmit / BeforeAgent
}

// ParsePayload reads one payload. An empty stdin is an empty payload (a
// person running the hook by hand); anything else must be a JSON object.
func ParsePayload(r io.Reader) (Payload, error) {
	var p Payload
	data, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
	if err != nil {
		return p, fmt.Errorf("read payload: %w", err)
	}
	if len(data) > MaxPayload {
		return p, errors.New("payload larger than 1 MiB")
	}
	if strings.TrimSpace(string(data)) == "" {
		return p, nil
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return Payload{}, errors.New("payload is not a JSON object")
	}
	return p, nil
}

// Harnesses lists the harness names mindmount knows. "run" is the generic
// wrapper (mindmount run).
var Harnesses = []string{ClaudeCode, Codex, GeminiCLI, OpenCode, Run}

// Harness names, as given to --harness.
const (
	ClaudeCode = "claude-code"
	Codex      = "codex"
	GeminiCLI  = "gemini-cli"
	OpenCode   = "opencode"
	Run        = "run"
)

// KnownHarness reports whether name is one of Harnesses.
func KnownHarness(name string) bool {
	for _, h := range Harnesses {
		if h == name {
			return true
		}
	}
	return false
}

// SessionName confines a session ID, which comes from the payload and is
// therefore hostile input, to a safe file-name part: the slug of the ID
// (lower-case ASCII letters, digits and dashes, never a dot or a slash),
// plus a short hash of the raw ID whenever slugging changed it, so two
// different IDs never share a transcript. UUIDs pass unchanged.
func SessionName(id string) string {
	s := memgraph.Slug(id)
	if s == id {
		return s
	}
	sum := sha256.Sum256([]byte(id))
	if len(s) > 48 {
		s = strings.TrimRight(s[:48], "-")
	}
	return s + "-" + hex.EncodeToString(sum[:4])
}

// TranscriptRel is where the session's transcript goes in the memory:
// transcripts/<harness>-<session>.jsonl.
func TranscriptRel(harness, sessionID string) string {
	return memgraph.TranscriptsDir + "/" + memgraph.Slug(harness) + "-" + SessionName(sessionID) + ".jsonl"
}
