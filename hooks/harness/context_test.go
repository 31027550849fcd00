package harness

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestContextOutputShapes: Claude Code, Gemini CLI and Codex read one JSON
// object with hookSpecificOutput.{hookEventName, additionalContext};
// other harnesses get the text. Quotes, newlines and markup survive.
func TestContextOutputShapes(t *testing.T) {
	text := "# Persona\n\nSays \"hi\" & <waves>\n"
	for _, tc := range []struct{ harness, event, name string }{
		{ClaudeCode, EventSessionStart, "SessionStart"},
		{ClaudeCode, EventPrompt, "UserPromptSubmit"},
		{GeminiCLI, EventSessionStart, "SessionStart"},
		{GeminiCLI, EventPrompt, "BeforeAgent"},
		{Codex, EventSessionStart, "SessionStart"},
	} {
		out := ContextOutput(tc.harness, tc.event, text)
		var v map[string]map[string]string
		if err := json.Unmarshal(out, &v); err != nil || len(v) != 1 {
			t.Fatalf("%s %s: %v\n%s", tc.harness, tc.event, err, out)
		}
		h := v["hookSpecificOutput"]
		if len(h) != 2 || h["hookEventName"] != tc.name || h["additionalContext"] != text {
			t.Errorf("%s %s: %s", tc.harness, tc.event, out)
		}
		if strings.Count(string(out), "\n") != 1 {
			t.Errorf("%s: output is not one line: %q", tc.harness, out)
		}
	}
	if got := string(ContextOutput(Run, EventSessionStart, "plain")); got != "plain\n" {
		t.Errorf("run: %q", got)
	}
}

func TestFitBudget(t *testing.T) {
	text := strings.Repeat("a line of context\n", 500)
	for _, budget := range []int{0, 10, 100, 1000, len(text), len(text) + 1} {
		got := Fit(text, budget)
		if budget > 0 && len(got) > budget {
			t.Errorf("budget %d: %d bytes", budget, len(got))
		}
		if budget >= 200 && budget < len(text) && !strings.Contains(got, "context cut") {
			t.Errorf("budget %d: silent cut", budget)
		}
		if budget >= len(text) && got != text {
			t.Errorf("budget %d: changed text that fits", budget)
		}
	}
	if g := Guide("/home/ada/mnt"); strings.Count(g, "\n") != 2 || !strings.Contains(g, "/home/ada/mnt/user_memory/") {
		t.Errorf("guide: %q", g)
	}
}
