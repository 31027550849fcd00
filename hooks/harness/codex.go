package harness

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Codex (developers.openai.com/codex/mcp, /codex/hooks, /codex/guides/agents-md):
// config.toml ($CODEX_HOME, default ~/.codex, or .codex/ in a trusted
// project) holds [mcp_servers.<name>] tables; hooks.json beside it holds
// lifecycle hooks in Claude Code's shape (timeouts in seconds), which
// Codex runs once "[features] codex_hooks = true" is set and the hooks
// are trusted in /hooks; AGENTS.md is its instruction file.
func codexEdits(o InstallOptions, uninstall bool) []edit {
	dir := o.Env("CODEX_HOME")
	if dir == "" {
		dir = filepath.Join(o.Home, ".codex")
	}
	instr := filepath.Join(dir, "AGENTS.md")
	if o.Scope == "project" {
		dir = filepath.Join(o.Project, ".codex")
		instr = filepath.Join(o.Project, "AGENTS.md")
	}
	// Codex sets no variable for the project directory; it runs hooks in
	// the session's directory, the project, so a path inside the project
	// is written relative to it.
	// Codex caps a SessionEnd hook at 3 seconds; copying new lines is
	// well within that.
	specs := []hookSpec{
		{event: "SessionStart", command: hookCommand(o, EventSessionStart, ""), timeout: 30},
		{event: "Stop", command: hookCommand(o, EventStop, ""), timeout: 30},
		{event: "PreCompact", command: hookCommand(o, EventPreCompact, ""), timeout: 30},
		{event: "SessionEnd", command: hookCommand(o, EventSessionEnd, ""), timeout: 3},
	}
	edits := []edit{
		jsonEdit(filepath.Join(dir, "hooks.json"), "hooks SessionStart, Stop, PreCompact, SessionEnd", uninstall,
			removeHooks, func(root *object) error { return addHooks(root, specs) }),
		blockEdit(instr, "memory instructions", Instructions(o.prosePath(o.Memory), o.MCP), uninstall),
	}
	if o.MCP || uninstall {
		edits = append(edits, tomlEdit(filepath.Join(dir, "config.toml"), "MCP server "+MCPName, o, uninstall))
	}
	return edits
}

// The TOML block is delimited by comments, as the markdown one is: TOML
// has no library that rewrites a file and keeps the user's comments and
// layout, so we append our table as text and check the result parses.
const (
	tomlBegin = "# mindmount:begin (added by \"mindmount hooks install\"; \"mindmount hooks uninstall\" removes it)"
	tomlEnd   = "# mindmount:end"
)

func tomlEdit(path, note string, o InstallOptions, uninstall bool) edit {
	onlyOurs := func(old []byte) bool {
		rest, err := removeTOMLBlock(old)
		return err == nil && len(bytes.TrimSpace(rest)) == 0
	}
	return edit{path: path, note: note, onlyOurs: onlyOurs, change: func(old []byte) ([]byte, error) {
		rest, err := removeTOMLBlock(old)
		if err != nil {
			return nil, err
		}
		var before map[string]any
		if err := toml.Unmarshal(rest, &before); err != nil {
			return nil, fmt.Errorf("not valid TOML (%v); add mindmount's entries by hand (see the README)", err)
		}
		if uninstall {
			if old != nil && len(bytes.TrimSpace(rest)) == 0 {
				return nil, nil
			}
			return rest, nil
		}
		if servers, ok := before["mcp_servers"].(map[string]any); ok {
			if _, ok := servers[MCPName]; ok {
				return nil, fmt.Errorf("[mcp_servers.%s] exists and is not mindmount's; rename it or remove it first", MCPName)
			}
		}
		var b bytes.Buffer
		b.Write(rest)
		if len(rest) > 0 {
			if !bytes.HasSuffix(rest, []byte("\n")) {
				b.WriteByte('\n')
			}
			b.WriteByte('\n')
		}
		command, args := o.Mindmount, []string{"mcp", o.Memory}
		if o.Scope == "project" {
			// config.toml expands no variables: a shell does, for the
			// project's file (see portable.go).
			command, args = "sh", []string{"-c", "exec " + o.shellBinary("") + " mcp " + o.shellPath(o.Memory, "")}
		}
		quoted := make([]string, len(args))
		for i, a := range args {
			quoted[i] = tomlString(a)
		}
		fmt.Fprintf(&b, "%s\n[mcp_servers.%s]\ncommand = %s\nargs = [%s]\n%s\n",
			tomlBegin, MCPName, tomlString(command), strings.Join(quoted, ", "), tomlEnd)
		var after map[string]any
		if err := toml.Unmarshal(b.Bytes(), &after); err != nil {
			// e.g. mcp_servers written as an inline table: a [table]
			// after it would redefine it.
			return nil, fmt.Errorf("cannot add [mcp_servers.%s] to this file (%v); add it by hand (see the README)", MCPName, err)
		}
		return b.Bytes(), nil
	}}
}

// tomlString is a TOML basic string: quotes and backslashes escaped,
// control characters as \u escapes, everything else literal.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func removeTOMLBlock(data []byte) ([]byte, error) {
	rest, err := cutBlock(data, tomlBegin, tomlEnd)
	if err != nil {
		return nil, err
	}
	return removeLegacyTOMLBlock(rest)
}
