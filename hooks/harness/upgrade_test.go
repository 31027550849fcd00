package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallReplacesEarlierBuild: the MCP entries and instruction blocks
// of the build before the rename are replaced by mindmount's; those of the
// other program called engram, and the user's text, stay.
func TestInstallReplacesEarlierBuild(t *testing.T) {
	home := t.TempDir()
	files := map[string]string{
		".claude.json": `{"mcpServers": {
  "engram": {"type": "stdio", "command": "/usr/local/bin/engram", "args": ["mcp", "/mem"]},
  "notes": {"command": "notes-server"}}}`,
		".codex/config.toml": "model = \"o3\"\n\n" + legacyTOMLBegin + "\n[mcp_servers.engram]\ncommand = \"/usr/local/bin/engram\"\nargs = [\"mcp\", \"/mem\"]\n" + legacyTOMLEnd + "\n",
		".codex/AGENTS.md":   "# My rules\n\n" + legacyBlockBegin + "\n## Long-term memory (engram)\n" + legacyBlockEnd + "\n",
		// The other engram: same server name, another command line.
		".gemini/settings.json": `{"mcpServers": {"engram": {"command": "engram", "args": ["mcp"]}}}`,
		".gemini/GEMINI.md":     "<!-- engram:begin -->\nthe other program's block\n<!-- engram:end -->\n",
	}
	for rel, data := range files {
		p := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(data), 0o644)
	}
	for _, h := range []string{ClaudeCode, Codex, GeminiCLI} {
		o := InstallOptions{Harness: h, Scope: "user", Home: home, Memory: "/mem", Mindmount: "/usr/local/bin/mindmount", MCP: true}
		if _, err := Install(o); err != nil {
			t.Fatalf("%s: %v", h, err)
		}
	}
	claude := readJSON(t, filepath.Join(home, ".claude.json"))["mcpServers"].(map[string]any)
	if _, ok := claude["engram"]; ok {
		t.Errorf("the old build's MCP server is still registered: %v", claude)
	}
	if claude["mindmount"] == nil || claude["notes"] == nil {
		t.Errorf("servers %v", claude)
	}
	toml := string(mustRead(t, filepath.Join(home, ".codex/config.toml")))
	if strings.Contains(toml, "engram") || !strings.HasPrefix(toml, "model = \"o3\"\n") || !strings.Contains(toml, "[mcp_servers.mindmount]") {
		t.Errorf("config.toml:\n%s", toml)
	}
	agents := string(mustRead(t, filepath.Join(home, ".codex/AGENTS.md")))
	if strings.Contains(agents, "engram") || !strings.HasPrefix(agents, "# My rules\n\n"+blockBegin) {
		t.Errorf("AGENTS.md:\n%s", agents)
	}
	gemini := readJSON(t, filepath.Join(home, ".gemini/settings.json"))["mcpServers"].(map[string]any)
	if gemini["engram"] == nil || gemini["mindmount"] == nil {
		t.Errorf("the other program's server must stay beside ours: %v", gemini)
	}
	if md := string(mustRead(t, filepath.Join(home, ".gemini/GEMINI.md"))); !strings.Contains(md, "the other program's block") {
		t.Errorf("GEMINI.md lost the other program's block:\n%s", md)
	}

	// Uninstall removes the old build's entries too.
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(files[".claude.json"]), 0o644)
	if _, err := Uninstall(InstallOptions{Harness: ClaudeCode, Scope: "user", Home: home, Memory: "/mem", Mindmount: "/usr/local/bin/mindmount"}); err != nil {
		t.Fatal(err)
	}
	if s := string(mustRead(t, filepath.Join(home, ".claude.json"))); strings.Contains(s, "engram") || !strings.Contains(s, "notes-server") {
		t.Errorf(".claude.json after uninstall:\n%s", s)
	}
}
