package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 16.2 over MCP: the index the view tool shows keeps its budget, and
// the full listing its footer names can be viewed too (the daemon writes no
// file there: the view is made up, as the mount makes it up).
func TestViewFullIndexAtFooterPath(t *testing.T) {
	dir := newRepo(t)
	var files []string
	for i := 0; i < 30; i++ {
		rel := fmt.Sprintf("user_memory/m-%02d.md", i)
		files = append(files, rel)
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(memoryFile("M", fmt.Sprintf("Memory number %d about something", i), "x")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, ".mindmount"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".mindmount", "settings"), []byte("index_tokens: 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "many")
	c := connect(t, startRuntime(t, dir), nil)
	idx := c.ok("view", map[string]any{"path": "user_memory.md"})
	_, footer, ok := strings.Cut(idx, " not shown. All of them: ")
	if !ok {
		t.Fatalf("user_memory.md at a 100-token budget has no footer:\n%s", idx)
	}
	full, _, _ := strings.Cut(footer, ";")
	for _, p := range []string{full, "/memories/" + full} {
		listing := c.ok("view", map[string]any{"path": p})
		for _, rel := range append(files, "user_memory/likes-tea.md") {
			if !strings.Contains(listing, "- "+rel+" — ") {
				t.Errorf("view %s lacks %s:\n%s", p, rel, listing)
			}
		}
		if strings.Contains(listing, "not shown") {
			t.Errorf("view %s is cut:\n%s", p, listing)
		}
	}
	if got := c.ok("view", map[string]any{"path": ".mindmount/index/character_memory.md"}); !strings.Contains(got, "- character_memory/brief.md — ") {
		t.Errorf("full character index:\n%s", got)
	}
	c.fails("str_replace", map[string]any{"path": full, "old_str": "M", "new_str": "N"}, "generated")
}
