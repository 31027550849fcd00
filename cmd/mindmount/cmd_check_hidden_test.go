package main

import (
	"strings"
	"testing"
)

// TestCheckWarnsHidden: a memory holding a bidi override or another
// invisible format character is reported by check with its file and line,
// as a warning: the file stays valid.
func TestCheckWarnsHidden(t *testing.T) {
	files := map[string]string{}
	for k, v := range mgFiles {
		files[k] = v
	}
	files["user_memory/tea.md"] = "---\ndescription: Likes tea\n---\n# Tea\n\n## Fact\nTea, \u202edesab-kcalb\u202c only.\n"
	files["user_memory/emoji.md"] = "---\ndescription: Codes\n---\n# Emoji\n\n## Fact\nA 👩\u200d💻 at heart.\n"
	dir := mgRepo(t, files)
	out, errs, code := mgRun("check", dir)
	if code != 0 {
		t.Fatalf("exit %d: a warning made the check fail\n%s%s", code, out, errs)
	}
	if !strings.Contains(out, "user_memory/tea.md:7: warning: invisible format character U+202E") {
		t.Errorf("no warning with file and line:\n%s", out)
	}
	if strings.Contains(out, "emoji.md") || strings.Contains(out, "\u202e") {
		t.Errorf("warned about an emoji's joiner, or printed the override itself:\n%s", out)
	}
}
