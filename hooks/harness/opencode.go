package harness

import (
	"fmt"
	"path"
	"path/filepath"

	"github.com/mindmount/mindmount/memgraph"
)

// OpenCode (opencode.ai/docs/config, /mcp-servers, /rules): opencode.json
// (~/.config/opencode/opencode.json, or opencode.json in a project) holds
// "mcp" servers of type "local" with the command as one list, and
// "instructions", a list of files added to the system prompt. AGENTS.md is
// its rules file. OpenCode has no shell lifecycle hooks (its plugins are
// JavaScript), so the compiled context reaches it as an instruction file:
// CONTEXT.md of the memory, which a mount or "mindmount watch" keeps current.
func opencodeEdits(o InstallOptions, uninstall bool) []edit {
	cfgHome := o.Env("XDG_CONFIG_HOME")
	if cfgHome == "" {
		cfgHome = filepath.Join(o.Home, ".config")
	}
	config := filepath.Join(cfgHome, "opencode", "opencode.json")
	rules := filepath.Join(cfgHome, "opencode", "AGENTS.md")
	if o.Scope == "project" {
		config = filepath.Join(o.Project, "opencode.json")
		rules = filepath.Join(o.Project, "AGENTS.md")
	}
	// OpenCode substitutes {env:VAR} anywhere in its configuration.
	contextFile := o.dataPath(filepath.Join(o.Memory, memgraph.ContextFile), "{env:HOME}")
	return []edit{
		jsonEdit(config, withMCP(o, uninstall, "instructions "+contextFile), uninstall,
			func(root *object) error {
				// The memory an earlier install wired, which may have
				// moved since: its server entry names it.
				if argv := ourMCPArgv(root, "mcp"); len(argv) == 3 {
					removeString(root, "instructions", path.Join(argv[2], memgraph.ContextFile))
				}
				removeMCP(root, "mcp")
				removeString(root, "instructions", contextFile)
				return nil
			},
			func(root *object) error {
				if o.MCP {
					s := newObject()
					s.set("type", "local")
					s.set("command", strList(o.binary("{env:HOME}"), "mcp", o.dataPath(o.Memory, "{env:HOME}")))
					s.set("enabled", true)
					if err := setMCP(root, "mcp", s); err != nil {
						return err
					}
				}
				return addString(root, "instructions", contextFile)
			}),
		blockEdit(rules, "memory instructions", Instructions(o.prosePath(o.Memory), o.MCP), uninstall),
	}
}

// withMCP is note, and the MCP server when this install registers one (a
// memory that is a mount gets none: its agent has the files) or this
// uninstall removes one.
func withMCP(o InstallOptions, uninstall bool, note string) string {
	if o.MCP || uninstall {
		return note + " and MCP server " + MCPName
	}
	return note
}

// addString appends s to the list root[key], creating the list.
func addString(root *object, key, s string) error {
	var list []any
	if v, ok := root.get(key); ok && v != nil {
		l, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%q is not a list", key)
		}
		list = l
	}
	root.set(key, append(list, s))
	return nil
}

// removeString drops s from the list root[key], and the list when s was
// all it held.
func removeString(root *object, key, s string) {
	l, ok := root.vals[key].([]any)
	if !ok {
		return
	}
	var kept []any
	for _, v := range l {
		if v != s {
			kept = append(kept, v)
		}
	}
	switch {
	case len(kept) == len(l):
	case len(kept) == 0:
		root.del(key)
	default:
		root.set(key, kept)
	}
}

// ourMCPArgv is the command line of mindmount's server in root[section],
// nil when there is none.
func ourMCPArgv(root *object, section string) []string {
	servers, ok := root.vals[section].(*object)
	if !ok {
		return nil
	}
	v, ok := servers.get(MCPName)
	if !ok {
		return nil
	}
	if argv := mcpArgv(v); isOurArgv(argv) {
		return argv
	}
	return nil
}
