package harness

import "path/filepath"

// What the build before the rename, then called engram, added to a
// harness's files: its instructions blocks and its MCP server entries.
// Install and Uninstall remove them with mindmount's own, so one
// "mindmount hooks install --harness NAME" upgrades a harness. Its hook
// commands need nothing here: isOurCommand knows them by their shape.
//
// Another program called engram registers its own "engram" MCP server and
// instructions: only entries of exactly the shape the old build wrote are
// ours to remove (the full begin line; "engram mcp /abs/memory").
const (
	legacyName       = "engram"
	legacyBlockBegin = `<!-- engram:begin (added by "engram hooks install"; "engram hooks uninstall" removes it) -->`
	legacyBlockEnd   = "<!-- engram:end -->"
	legacyTOMLBegin  = `# engram:begin (added by "engram hooks install"; "engram hooks uninstall" removes it)`
	legacyTOMLEnd    = "# engram:end"
)

// removeLegacyBlock drops the old instructions block of a markdown file.
func removeLegacyBlock(data []byte) ([]byte, error) {
	return cutBlock(data, legacyBlockBegin, legacyBlockEnd)
}

// removeLegacyTOMLBlock drops the old [mcp_servers.engram] block.
func removeLegacyTOMLBlock(data []byte) ([]byte, error) {
	return cutBlock(data, legacyTOMLBegin, legacyTOMLEnd)
}

// removeLegacyMCP drops root[section].engram when it is the old build's
// "engram mcp /abs/memory"; a server of that name the user added, or the
// other program's, is left alone.
func removeLegacyMCP(root *object, section string) {
	removeMCPNamed(root, section, legacyName, func(argv []string) bool {
		return len(argv) == 3 && filepath.Base(argv[0]) == legacyName && argv[1] == "mcp" && filepath.IsAbs(argv[2])
	})
}
