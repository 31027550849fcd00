package harness

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// projectFiles lists every file under proj with its content.
func projectFiles(t *testing.T, proj string) map[string]string {
	t.Helper()
	files := map[string]string{}
	filepath.WalkDir(proj, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files[p] = string(mustRead(t, p))
		}
		return nil
	})
	return files
}

// hookArgv runs a hook's command line through sh the way the harness does
// (in the project, with HOME and the project variables set) and returns
// the words it expands to.
func hookArgv(t *testing.T, command, home, proj string) []string {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh")
	}
	cmd := exec.Command("sh", "-c", `set -- `+command+`; for a; do printf '%s\n' "$a"; done`)
	cmd.Dir = proj
	cmd.Env = []string{"HOME=" + home, "CLAUDE_PROJECT_DIR=" + proj, "GEMINI_PROJECT_DIR=" + proj, "PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh: %v (%s)", err, command)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

// absolute resolves a path as the hook resolves its --repo: relative to
// the project, where the harness runs it.
func absolute(p, proj string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(proj, p)
}

// TestProjectScopeIsPortable (issue 27): for every harness, the files
// "hooks install --scope project" writes into a project, which is usually
// committed, hold neither the home directory nor the project's absolute
// path, whether the memory lies under the home or inside the project and
// whether the binary is found through $PATH or lies under the home; the
// hook commands still name this binary and this memory once the shell
// expands them; installing again for a moved memory leaves no backup of
// a file install created, and uninstalling removes every one of them.
func TestProjectScopeIsPortable(t *testing.T) {
	for _, h := range []string{ClaudeCode, Codex, GeminiCLI, OpenCode} {
		for _, memIn := range []string{"home", "project"} {
			for _, onPath := range []bool{false, true} {
				name := h + "/memory-in-" + memIn
				if onPath {
					name += "/on-path"
				}
				t.Run(name, func(t *testing.T) {
					home := t.TempDir()
					proj := filepath.Join(home, "src", "proj") // a checkout under the home
					os.MkdirAll(proj, 0o755)
					bin := filepath.Join(home, "go", "bin", "mindmount")
					os.MkdirAll(filepath.Dir(bin), 0o755)
					os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
					base := home
					if memIn == "project" {
						base = proj
					}
					o := InstallOptions{Harness: h, Scope: "project", Home: home, Project: proj, Mindmount: bin, MCP: true}
					if onPath {
						o.LookPath = func(string) (string, error) { return bin, nil }
					} else {
						o.LookPath = func(string) (string, error) { return "", errors.New("not found") }
					}
					for _, m := range []string{"old-memory", "memory"} { // the memory moved
						o.Memory = filepath.Join(base, m)
						os.MkdirAll(o.Memory, 0o755)
						if _, err := Install(o); err != nil {
							t.Fatal(err)
						}
					}
					files := projectFiles(t, proj)
					if len(files) == 0 {
						t.Fatal("nothing written into the project")
					}
					for p, text := range files {
						if strings.Contains(p, ".mindmount-backup-") {
							t.Errorf("backup of a file install created: %s", p)
						}
						if strings.Contains(text, home) {
							t.Errorf("%s names a personal path (%s):\n%s", p, home, text)
						}
						if strings.HasSuffix(p, ".toml") {
							var v map[string]any
							if err := toml.Unmarshal([]byte(text), &v); err != nil {
								t.Errorf("%s: %v", p, err)
							}
						}
						if strings.HasSuffix(p, ".md") && !strings.Contains(text, "memory/CONTEXT.md") {
							t.Errorf("%s does not point at the memory:\n%s", p, text)
						}
					}
					wantBin := bin
					if onPath {
						wantBin = "mindmount"
					}
					var commands []string
					for p := range files {
						if strings.HasSuffix(p, ".json") {
							for _, ev := range []string{"SessionStart", "Stop", "SessionEnd", "PreCompact", "AfterAgent", "PreCompress"} {
								commands = append(commands, ourCommands(readJSON(t, p), ev)...)
							}
						}
					}
					if h != OpenCode && len(commands) == 0 {
						t.Fatal("no hook commands written")
					}
					for _, c := range commands {
						argv := hookArgv(t, c, home, proj)
						if len(argv) != 7 || argv[0] != wantBin || argv[6] == "" || absolute(argv[6], proj) != o.Memory {
							t.Errorf("%q expands to %q, want %s … --repo %s", c, argv, wantBin, o.Memory)
						}
					}
					// The MCP server entry names them too, once the harness
					// expands its variable.
					expand := strings.NewReplacer("${HOME}", home, "{env:HOME}", home)
					servers := 0
					for p, text := range files {
						var argv []string
						switch {
						case strings.HasSuffix(p, ".json"):
							root, err := parseObject([]byte(text))
							if err != nil {
								t.Fatal(err)
							}
							for _, section := range []string{"mcpServers", "mcp"} {
								if a := ourMCPArgv(root, section); a != nil {
									argv = a
									argv[0], argv[2] = expand.Replace(argv[0]), absolute(expand.Replace(argv[2]), proj)
								}
							}
						case strings.HasSuffix(p, ".toml"):
							var v struct {
								MCPServers map[string]struct {
									Command string
									Args    []string
								} `toml:"mcp_servers"`
							}
							toml.Unmarshal([]byte(text), &v)
							s := v.MCPServers[MCPName]
							if s.Command != "sh" || len(s.Args) != 2 || !strings.HasPrefix(s.Args[1], "exec ") {
								t.Fatalf("%s: %+v", p, s)
							}
							argv = hookArgv(t, strings.TrimPrefix(s.Args[1], "exec "), home, proj)
							argv[2] = absolute(argv[2], proj)
						default:
							continue
						}
						if argv == nil {
							continue
						}
						servers++
						if len(argv) != 3 || argv[0] != wantBin || argv[1] != "mcp" || argv[2] != o.Memory {
							t.Errorf("%s: MCP server %q, want %s mcp %s", p, argv, wantBin, o.Memory)
						}
					}
					if servers != 1 {
						t.Errorf("%d MCP server entries, want 1", servers)
					}
					if _, err := Uninstall(o); err != nil {
						t.Fatal(err)
					}
					if left := projectFiles(t, proj); len(left) != 0 {
						t.Errorf("uninstall left %v", slices.Collect(mapKeys(left)))
					}
				})
			}
		}
	}
}

// ourCommands are mindmount's hook commands under hooks.<event>.
func ourCommands(settings map[string]any, event string) []string {
	hooks, _ := settings["hooks"].(map[string]any)
	list, _ := hooks[event].([]any)
	var out []string
	for _, g := range list {
		hs, _ := g.(map[string]any)["hooks"].([]any)
		for _, h := range hs {
			if c, _ := h.(map[string]any)["command"].(string); isOurCommand(c) {
				out = append(out, c)
			}
		}
	}
	return out
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
