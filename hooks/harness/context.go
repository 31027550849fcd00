package harness

import (
	"encoding/json"
	"fmt"
	"strings"
)

// DefaultBudget is the context a session-start hook adds, in bytes: a
// quarter of CONTEXT.md's own default, because it is paid on every
// session of every project.
const DefaultBudget = 8 << 10

// Event names as "mindmount hook EVENT" takes them.
const (
	EventSessionStart = "session-start"
	EventPrompt       = "prompt"
	EventStop         = "stop"
	EventSessionEnd   = "session-end"
	EventPreCompact   = "pre-compact"
)

// Guide is the two lines that follow the context: where the memory is and
// how to add to it. dir is the memory as the agent can reach it.
func Guide(dir string) string {
	return fmt.Sprintf("Your long-term memory is the folder %s (markdown files in git; CONTEXT.md is the summary above, other files are read on demand).\n"+
		"To remember a fact about the user, write %s/user_memory/<short-slug>.md with frontmatter \"description: <one line>\" and sections \"## Fact\" and \"## Episode\"; this conversation is also consolidated into memories automatically.\n",
		dir, strings.TrimRight(dir, "/"))
}

// hookEventName is the name the harness uses for an event in its output.
func hookEventName(harness, event string) string {
	switch event {
	case EventSessionStart:
		return "SessionStart"
	case EventPrompt:
		if harness == GeminiCLI {
			return "BeforeAgent"
		}
		return "UserPromptSubmit"
	}
	return ""
}

// ContextOutput renders text as the output a harness reads from an
// event's hook. Claude Code, Gemini CLI and Codex all read
// {"hookSpecificOutput":{"hookEventName":...,"additionalContext":...}}
// from stdout; for any other harness the text is printed as is.
func ContextOutput(harness, event, text string) []byte {
	switch harness {
	case ClaudeCode, GeminiCLI, Codex:
		out := struct {
			HookSpecificOutput struct {
				HookEventName     string `json:"hookEventName"`
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}{}
		out.HookSpecificOutput.HookEventName = hookEventName(harness, event)
		out.HookSpecificOutput.AdditionalContext = text
		b, _ := json.Marshal(out)
		return append(b, '\n')
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return []byte(text)
}

// Fit cuts text to at most budget bytes at a line boundary, saying so in a
// last line, so a cut is never silent. The guide is not cut.
func Fit(text string, budget int) string {
	if budget <= 0 || len(text) <= budget {
		return text
	}
	const marker = "\n<!-- mindmount: context cut to fit the hook budget; read CONTEXT.md for the rest -->\n"
	if budget <= len(marker) {
		return ""
	}
	cut := max(budget-len(marker), 0)
	if i := strings.LastIndexByte(text[:cut], '\n'); i >= 0 {
		cut = i
	} else {
		cut = 0
	}
	return text[:cut] + marker
}
