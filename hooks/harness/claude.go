package harness

import "path/filepath"

// Claude Code (code.claude.com/docs/en/hooks, /mcp): lifecycle hooks live
// in settings.json (~/.claude/settings.json for the user,
// .claude/settings.json in a project); MCP servers in ~/.claude.json
// ("mcpServers", user scope) or .mcp.json in the project. Hook timeouts
// are in seconds.
func claudeEdits(o InstallOptions, uninstall bool) []edit {
	settings := filepath.Join(o.Home, ".claude", "settings.json")
	mcp := filepath.Join(o.Home, ".claude.json")
	if o.Scope == "project" {
		settings = filepath.Join(o.Project, ".claude", "settings.json")
		mcp = filepath.Join(o.Project, ".mcp.json")
	}
	specs := []hookSpec{
		{event: "SessionStart", command: hookCommand(o, EventSessionStart), timeout: 30},
		{event: "Stop", command: hookCommand(o, EventStop), timeout: 30},
		{event: "PreCompact", command: hookCommand(o, EventPreCompact), timeout: 30},
		{event: "SessionEnd", command: hookCommand(o, EventSessionEnd), timeout: 30},
	}
	edits := []edit{jsonEdit(settings, "hooks SessionStart, Stop, PreCompact, SessionEnd", uninstall,
		removeHooks, func(root *object) error { return addHooks(root, specs) })}
	if o.MCP || uninstall {
		edits = append(edits, jsonEdit(mcp, "MCP server "+MCPName, uninstall,
			func(root *object) error { removeMCP(root, "mcpServers"); return nil },
			func(root *object) error { return setMCP(root, "mcpServers", stdioServer(o, true)) }))
	}
	return edits
}
