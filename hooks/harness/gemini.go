package harness

import "path/filepath"

// Gemini CLI (geminicli.com/docs/hooks/reference, /docs/tools/mcp-server):
// settings.json (~/.gemini/settings.json, or .gemini/settings.json in a
// project) holds "hooks" in the same event → groups → handlers shape as
// Claude Code, with timeouts in milliseconds, and "mcpServers". GEMINI.md
// is its instruction file. AfterAgent ends every turn: the transcript is
// copied then, as Claude Code's Stop does.
// geminiProjectDir is the variable Gemini CLI sets to the project
// directory for the hooks it runs.
const geminiProjectDir = "GEMINI_PROJECT_DIR"

func geminiEdits(o InstallOptions, uninstall bool) []edit {
	settings := filepath.Join(o.Home, ".gemini", "settings.json")
	instr := filepath.Join(o.Home, ".gemini", "GEMINI.md")
	if o.Scope == "project" {
		settings = filepath.Join(o.Project, ".gemini", "settings.json")
		instr = filepath.Join(o.Project, "GEMINI.md")
	}
	specs := []hookSpec{
		{event: "SessionStart", command: hookCommand(o, EventSessionStart, geminiProjectDir), timeout: 30000, name: "mindmount-session-start"},
		{event: "AfterAgent", command: hookCommand(o, EventStop, geminiProjectDir), timeout: 30000, name: "mindmount-stop"},
		{event: "PreCompress", command: hookCommand(o, EventPreCompact, geminiProjectDir), timeout: 30000, name: "mindmount-pre-compact"},
		{event: "SessionEnd", command: hookCommand(o, EventSessionEnd, geminiProjectDir), timeout: 30000, name: "mindmount-session-end"},
	}
	return []edit{
		jsonEdit(settings, withMCP(o, uninstall, "hooks SessionStart, AfterAgent, PreCompress, SessionEnd"), uninstall,
			func(root *object) error { removeMCP(root, "mcpServers"); return removeHooks(root) },
			func(root *object) error {
				if o.MCP {
					if err := setMCP(root, "mcpServers", stdioServer(o, false)); err != nil {
						return err
					}
				}
				return addHooks(root, specs)
			}),
		blockEdit(instr, "memory instructions", Instructions(o.prosePath(o.Memory), o.MCP), uninstall),
	}
}
