package harness

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// hookSpec is one lifecycle hook as Claude Code, Gemini CLI and Codex
// declare them: hooks.<Event> is a list of groups {matcher?, hooks: [
// {type: "command", command, timeout, name?}]}.
type hookSpec struct {
	event   string // the harness's event name (SessionStart, ...)
	command string
	timeout int // in the harness's unit
	name    string
}

// jsonEdit returns an edit of a JSON settings file: drop whatever mindmount
// added before, then (installing) let add put the current entries in.
// A file left empty that we created is removed on uninstall.
func jsonEdit(path, note string, uninstall bool, remove func(*object) error, add func(*object) error) edit {
	onlyOurs := func(old []byte) bool {
		root, err := parseObject(old)
		return err == nil && remove(root) == nil && len(root.keys) == 0
	}
	return edit{path: path, note: note, onlyOurs: onlyOurs, change: func(old []byte) ([]byte, error) {
		root, err := parseObject(old)
		if err != nil {
			return nil, fmt.Errorf("not valid JSON (%v); add mindmount's entries by hand (see the README)", err)
		}
		if err := remove(root); err != nil {
			return nil, err
		}
		if !uninstall {
			if err := add(root); err != nil {
				return nil, err
			}
		} else if len(root.keys) == 0 {
			return nil, nil
		}
		return root.marshal(), nil
	}}
}

// addHooks appends one group per spec under root.hooks.
func addHooks(root *object, specs []hookSpec) error {
	hooks, err := root.child("hooks")
	if err != nil {
		return err
	}
	for _, s := range specs {
		h := newObject()
		if s.name != "" {
			h.set("name", s.name)
		}
		h.set("type", "command")
		h.set("command", s.command)
		h.set("timeout", json.Number(fmt.Sprint(s.timeout)))
		group := newObject()
		group.set("hooks", []any{h})
		var list []any
		if v, ok := hooks.get(s.event); ok && v != nil {
			l, ok := v.([]any)
			if !ok {
				return fmt.Errorf("hooks.%s is not a list", s.event)
			}
			list = l
		}
		hooks.set(s.event, append(list, group))
	}
	return nil
}

// removeHooks drops every hook handler mindmount installed, and the groups,
// event lists and hooks object that only those handlers made up.
func removeHooks(root *object) error {
	v, ok := root.get("hooks")
	if !ok {
		return nil
	}
	hooks, ok := v.(*object)
	if !ok {
		return nil // not ours to interpret
	}
	for _, event := range append([]string(nil), hooks.keys...) {
		list, ok := hooks.vals[event].([]any)
		if !ok {
			continue // e.g. Gemini CLI's "enabled": true
		}
		var kept []any
		for _, g := range list {
			group, ok := g.(*object)
			if !ok {
				kept = append(kept, g)
				continue
			}
			handlers, ok := group.vals["hooks"].([]any)
			if !ok {
				kept = append(kept, g)
				continue
			}
			var keptH []any
			for _, h := range handlers {
				if ho, ok := h.(*object); ok {
					if c, ok := ho.vals["command"].(string); ok && isOurCommand(c) {
						continue
					}
				}
				keptH = append(keptH, h)
			}
			if len(keptH) == len(handlers) {
				kept = append(kept, g)
				continue
			}
			if len(keptH) > 0 {
				group.set("hooks", keptH)
				kept = append(kept, group)
			}
		}
		if len(kept) == len(list) {
			continue
		}
		if len(kept) == 0 {
			hooks.del(event)
		} else {
			hooks.set(event, kept)
		}
	}
	if len(hooks.keys) == 0 {
		root.del("hooks")
	}
	return nil
}

// MCPName is the name mindmount's MCP server is registered under.
const MCPName = "mindmount"

// setMCP registers server under root[section][MCPName]. A server of that
// name the user added themselves is left alone: installing fails.
func setMCP(root *object, section string, server *object) error {
	servers, err := root.child(section)
	if err != nil {
		return err
	}
	if v, ok := servers.get(MCPName); ok && !isOurMCP(v) {
		return fmt.Errorf("%s.%s exists and is not mindmount's; rename it or remove it first", section, MCPName)
	}
	servers.set(MCPName, server)
	return nil
}

// removeMCP drops root[section][MCPName] when mindmount added it, and the
// entry the build before the rename added.
func removeMCP(root *object, section string) {
	removeMCPNamed(root, section, MCPName, isOurArgv)
	removeLegacyMCP(root, section)
}

// removeMCPNamed drops root[section][name] when its command line is ours.
func removeMCPNamed(root *object, section, name string, ours func(argv []string) bool) {
	v, ok := root.get(section)
	if !ok {
		return
	}
	servers, ok := v.(*object)
	if !ok {
		return
	}
	if s, ok := servers.get(name); ok && ours(mcpArgv(s)) {
		servers.del(name)
		if len(servers.keys) == 0 {
			root.del(section)
		}
	}
}

// isOurMCP recognizes {"command": ".../mindmount", "args": ["mcp", ...]} and
// OpenCode's {"command": [".../mindmount", "mcp", ...]}: a mindmount binary
// (any name containing "mindmount") serving MCP.
func isOurMCP(v any) bool { return isOurArgv(mcpArgv(v)) }

func isOurArgv(argv []string) bool {
	return len(argv) >= 2 && strings.Contains(filepath.Base(argv[0]), "mindmount") && argv[1] == "mcp"
}

// mcpArgv is an MCP server entry's command line (command, then args); nil
// when the entry has another shape.
func mcpArgv(v any) []string {
	o, ok := v.(*object)
	if !ok {
		return nil
	}
	var list []any
	switch c := o.vals["command"].(type) {
	case string:
		args, _ := o.vals["args"].([]any)
		list = append([]any{c}, args...)
	case []any:
		list = c
	}
	argv := make([]string, 0, len(list))
	for _, a := range list {
		s, ok := a.(string)
		if !ok {
			return nil
		}
		argv = append(argv, s)
	}
	return argv
}

// stdioServer is the usual MCP server entry: {"command":..., "args":[...]}.
func stdioServer(o InstallOptions, withType bool) *object {
	s := newObject()
	if withType {
		s.set("type", "stdio")
	}
	// Claude Code and Gemini CLI expand ${VAR} in these files.
	s.set("command", o.binary("${HOME}"))
	s.set("args", strList("mcp", o.dataPath(o.Memory, "${HOME}")))
	return s
}
