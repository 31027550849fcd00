package harness

import "path/filepath"

// Claude Code (code.claude.com/docs/en/hooks, /settings, /mcp): lifecycle
// hooks live in ~/.claude/settings.json for the user; for a project in
// .claude/settings.local.json, the project file Claude Code keeps out of
// git, because the hooks name this user's memory. MCP servers go in
// ~/.claude.json ("mcpServers", user scope) or .mcp.json in the project.
// Hook timeouts are in seconds.
// claudeProjectDir is the variable Claude Code sets to the project
// directory for the hooks it runs.
const claudeProjectDir = "CLAUDE_PROJECT_DIR"

func claudeEdits(o InstallOptions, uninstall bool) []edit {
	settings := filepath.Join(o.Home, ".claude", "settings.json")
	mcp := filepath.Join(o.Home, ".claude.json")
	if o.Scope == "project" {
		settings = filepath.Join(o.Project, ".claude", "settings.local.json")
		mcp = filepath.Join(o.Project, ".mcp.json")
	}
	specs := []hookSpec{
		{event: "SessionStart", command: hookCommand(o, EventSessionStart, claudeProjectDir), timeout: 30},
		{event: "Stop", command: hookCommand(o, EventStop, claudeProjectDir), timeout: 30},
		{event: "PreCompact", command: hookCommand(o, EventPreCompact, claudeProjectDir), timeout: 30},
		{event: "SessionEnd", command: hookCommand(o, EventSessionEnd, claudeProjectDir), timeout: 30},
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
