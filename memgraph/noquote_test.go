package memgraph

import (
	"strings"
	"testing"
)

// TestMessagesNeverQuoteValues (issue 23, item 5): a validation message
// names the key and the line, never a value or content — a frontmatter
// value or key holding a secret would otherwise reach the log and the
// status file.
func TestMessagesNeverQuoteValues(t *testing.T) {
	key := "sk_live_" + "u8jzPde0IgxLd6GncfBAepfJ"
	files := map[string]string{
		"status":        "---\ndescription: d\nstatus: " + key + "\n---\n",
		"read_only":     "---\ndescription: d\nread_only: " + key + "\n---\n",
		"topic":         "---\ndescription: d\ntopic: " + key + "\n---\n",
		"supersedes":    "---\ndescription: d\nsupersedes: ../" + key + "\n---\n",
		"unknown key":   "---\ndescription: d\n" + key + ": 1\n---\n",
		"duplicate key": "---\ndescription: d\n" + key + ": 1\n" + key + ": 2\n---\n",
		"yaml anchor":   "---\ndescription: *" + key + "\n---\n",
		"yaml error":    "---\ndescription: [" + key + "\n---\n",
		"access log":    "---\ndescription: d\n---\n## Access log\nused, " + key + "\n",
	}
	for name, data := range files {
		probs := Validate("user_memory/a.md", []byte(data), nil)
		if len(probs) == 0 {
			t.Errorf("%s: no problem reported", name)
		}
		for _, p := range probs {
			if strings.Contains(p.String(), key) || strings.Contains(p.String(), "u8jzPde0") {
				t.Errorf("%s: %s", name, p)
			}
			if p.Line == 0 {
				t.Errorf("%s: no line: %s", name, p)
			}
		}
	}
	for _, data := range []string{"index_tokens: " + key + "\n", key + ": 3\n", "transcript_retention: " + key + "\n"} {
		_, probs := ParseSettings([]byte(data))
		if len(probs) != 1 || strings.Contains(probs[0].String(), key) {
			t.Errorf("settings %q: %v", data[:12], probs)
		}
	}
}
