package harness

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// fixture is one pre-existing settings file of a harness, in the format
// its documentation gives, placed where the harness keeps it.
type fixture struct{ from, to string }

type harnessCase struct {
	harness  string
	fixtures []fixture
	// check looks at the installed files: our entries are there.
	check func(t *testing.T, home, mem string)
}

var installCases = []harnessCase{
	{ClaudeCode, []fixture{
		{"testdata/claude-code/settings.json", ".claude/settings.json"},
		{"testdata/claude-code/claude.json", ".claude.json"},
	}, func(t *testing.T, home, mem string) {
		s := readJSON(t, filepath.Join(home, ".claude/settings.json"))
		for _, ev := range []string{"SessionStart", "Stop", "PreCompact", "SessionEnd"} {
			if n := countOurs(s, ev); n != 1 {
				t.Errorf("%s: %d mindmount hooks, want 1", ev, n)
			}
		}
		mcp := readJSON(t, filepath.Join(home, ".claude.json"))["mcpServers"].(map[string]any)["mindmount"].(map[string]any)
		if mcp["command"] != "/opt/mindmount/bin/mindmount-1.2" || !reflect.DeepEqual(mcp["args"], []any{"mcp", mem}) {
			t.Errorf("MCP entry %v", mcp)
		}
	}},
	{GeminiCLI, []fixture{
		{"testdata/gemini-cli/settings.json", ".gemini/settings.json"},
		{"testdata/gemini-cli/GEMINI.md", ".gemini/GEMINI.md"},
	}, func(t *testing.T, home, mem string) {
		s := readJSON(t, filepath.Join(home, ".gemini/settings.json"))
		for _, ev := range []string{"SessionStart", "AfterAgent", "PreCompress", "SessionEnd"} {
			if n := countOurs(s, ev); n != 1 {
				t.Errorf("%s: %d mindmount hooks, want 1", ev, n)
			}
		}
		if _, ok := s["mcpServers"].(map[string]any)["mindmount"]; !ok {
			t.Error("no MCP entry")
		}
		md := string(mustRead(t, filepath.Join(home, ".gemini/GEMINI.md")))
		if !strings.Contains(md, mem+"/CONTEXT.md") || !strings.HasPrefix(md, "# My rules") {
			t.Errorf("GEMINI.md:\n%s", md)
		}
	}},
	{Codex, []fixture{
		{"testdata/codex/config.toml", ".codex/config.toml"},
		{"testdata/codex/hooks.json", ".codex/hooks.json"},
		{"testdata/codex/AGENTS.md", ".codex/AGENTS.md"},
	}, func(t *testing.T, home, mem string) {
		var cfg map[string]any
		if err := toml.Unmarshal(mustRead(t, filepath.Join(home, ".codex/config.toml")), &cfg); err != nil {
			t.Fatal(err)
		}
		e := cfg["mcp_servers"].(map[string]any)["mindmount"].(map[string]any)
		if e["command"] != "/opt/mindmount/bin/mindmount-1.2" || !reflect.DeepEqual(e["args"], []any{"mcp", mem}) {
			t.Errorf("MCP entry %v", e)
		}
		h := readJSON(t, filepath.Join(home, ".codex/hooks.json"))
		if countOurs(h, "SessionStart") != 1 || countOurs(h, "Stop") != 1 || countOurs(h, "SessionEnd") != 1 {
			t.Errorf("hooks.json: %v", h)
		}
		if md := string(mustRead(t, filepath.Join(home, ".codex/AGENTS.md"))); !strings.Contains(md, blockBegin) {
			t.Errorf("AGENTS.md:\n%s", md)
		}
	}},
	{OpenCode, []fixture{
		{"testdata/opencode/opencode.json", ".config/opencode/opencode.json"},
		{"testdata/opencode/AGENTS.md", ".config/opencode/AGENTS.md"},
	}, func(t *testing.T, home, mem string) {
		c := readJSON(t, filepath.Join(home, ".config/opencode/opencode.json"))
		if !reflect.DeepEqual(c["instructions"], []any{"CONTRIBUTING.md", "docs/guidelines.md", mem + "/CONTEXT.md"}) {
			t.Errorf("instructions %v", c["instructions"])
		}
		e := c["mcp"].(map[string]any)["mindmount"].(map[string]any)
		if e["type"] != "local" || !reflect.DeepEqual(e["command"], []any{"/opt/mindmount/bin/mindmount-1.2", "mcp", mem}) {
			t.Errorf("MCP entry %v", e)
		}
	}},
}

func readJSON(t *testing.T, p string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(mustRead(t, p), &v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return v
}

// countOurs counts mindmount's handlers under hooks.<event>.
func countOurs(settings map[string]any, event string) int {
	hooks, _ := settings["hooks"].(map[string]any)
	list, _ := hooks[event].([]any)
	n := 0
	for _, g := range list {
		hs, _ := g.(map[string]any)["hooks"].([]any)
		for _, h := range hs {
			if c, _ := h.(map[string]any)["command"].(string); isOurCommand(c) {
				n++
			}
		}
	}
	return n
}

// sameContent compares two versions of a settings file: JSON by value
// (layout may change), anything else byte for byte.
func sameContent(t *testing.T, path string, a, b []byte) bool {
	if strings.HasSuffix(path, ".json") {
		var va, vb any
		if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
			return false
		}
		return reflect.DeepEqual(va, vb)
	}
	return string(a) == string(b)
}

// TestInstallUninstallKeepsUsersEntries installs each harness into a home
// that already has that harness's settings with the user's own servers,
// hooks and rules, installs again (no duplicates), then uninstalls: every
// file is back to the user's content, and every change left a backup.
func TestInstallUninstallKeepsUsersEntries(t *testing.T) {
	for _, hc := range installCases {
		t.Run(hc.harness, func(t *testing.T) {
			home := t.TempDir()
			mem := filepath.Join(t.TempDir(), "memory")
			orig := map[string][]byte{}
			for _, f := range hc.fixtures {
				p := filepath.Join(home, f.to)
				b := mustRead(t, f.from)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				orig[p] = b
			}
			clock := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
			o := InstallOptions{Harness: hc.harness, Scope: "user", Home: home, Memory: mem, Mindmount: "/opt/mindmount/bin/mindmount-1.2", MCP: true,
				Now: func() time.Time { clock = clock.Add(time.Second); return clock }}
			changes, err := Install(o)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range changes {
				if b, ok := orig[c.Path]; ok {
					if got, err := os.ReadFile(c.Backup); err != nil || string(got) != string(b) {
						t.Errorf("backup of %s: %v", c.Path, err)
					}
				}
			}
			if _, err := Install(o); err != nil { // idempotent
				t.Fatal(err)
			}
			hc.check(t, home, mem)
			// The user's own entries are all still there.
			for p, b := range orig {
				if !strings.HasSuffix(p, ".json") {
					continue
				}
				var user map[string]any
				json.Unmarshal(b, &user)
				now := readJSON(t, p)
				for k, v := range user {
					if k == "hooks" || k == "mcpServers" || k == "mcp" || k == "instructions" {
						continue // checked below, merged with ours
					}
					if !reflect.DeepEqual(now[k], v) {
						t.Errorf("%s: %q changed: %v", p, k, now[k])
					}
				}
			}
			if _, err := Uninstall(o); err != nil {
				t.Fatal(err)
			}
			for p, b := range orig {
				got := mustRead(t, p)
				if !sameContent(t, p, got, b) {
					t.Errorf("%s after uninstall:\n%s\nwant:\n%s", p, got, b)
				}
			}
			// Files mindmount created alone are gone again.
			filepath.Walk(home, func(p string, fi os.FileInfo, err error) error {
				if err == nil && !fi.IsDir() && !strings.Contains(p, ".mindmount-backup-") {
					if _, ok := orig[p]; !ok {
						t.Errorf("left behind: %s", p)
					}
				}
				return nil
			})
		})
	}
}

// TestInstallFreshHome: no settings at all; install creates them,
// uninstall removes them.
func TestInstallFreshHome(t *testing.T) {
	for _, h := range []string{ClaudeCode, GeminiCLI, Codex, OpenCode} {
		home := t.TempDir()
		o := InstallOptions{Harness: h, Scope: "user", Home: home, Memory: "/mem", Mindmount: "/bin/mindmount", MCP: true}
		ch, err := Install(o)
		if err != nil || len(ch) == 0 {
			t.Fatalf("%s: %v, %d changes", h, err, len(ch))
		}
		if _, err := Uninstall(o); err != nil {
			t.Fatal(err)
		}
		filepath.Walk(home, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() && !strings.Contains(p, ".mindmount-backup-") {
				t.Errorf("%s: left behind %s", h, p)
			}
			return nil
		})
	}
}

func TestInstallRefuses(t *testing.T) {
	home := t.TempDir()
	p := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(p), 0o755)
	bad := []byte("{\"hooks\": // a comment\n}")
	os.WriteFile(p, bad, 0o644)
	o := InstallOptions{Harness: ClaudeCode, Scope: "user", Home: home, Memory: "/mem", Mindmount: "/bin/mindmount"}
	if _, err := Install(o); err == nil {
		t.Error("installed into a file that is not JSON")
	}
	if got := mustRead(t, p); string(got) != string(bad) {
		t.Error("changed a file it could not parse")
	}
	// A server named mindmount that the user made is not taken over.
	os.WriteFile(p, []byte(`{}`), 0o644)
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte(`{"mcpServers":{"mindmount":{"command":"my-own"}}}`), 0o644)
	o.MCP = true
	if _, err := Install(o); err == nil {
		t.Error("replaced the user's own mindmount MCP server")
	}
	if _, err := Install(InstallOptions{Harness: "vim", Scope: "user", Home: home, Memory: "/m", Mindmount: "/e"}); err == nil {
		t.Error("unknown harness accepted")
	}
	if _, err := Install(InstallOptions{Harness: ClaudeCode, Scope: "global", Home: home, Memory: "/m", Mindmount: "/e"}); err == nil {
		t.Error("unknown scope accepted")
	}
}

// TestInstallProjectScope writes into the project, not the home.
func TestInstallProjectScope(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	o := InstallOptions{Harness: ClaudeCode, Scope: "project", Home: home, Project: proj, Memory: "/mem", Mindmount: "/bin/mindmount", MCP: true}
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".claude/settings.local.json", ".mcp.json"} {
		if _, err := os.Stat(filepath.Join(proj, p)); err != nil {
			t.Error(err)
		}
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("home touched: %v", entries)
	}
}

func TestShellQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{"/usr/bin/mindmount", "/home/a b/mindmount", "/x/it's/mindmount", "", "$HOME;rm -rf /"} {
		f := shellFields(shellQuote(s) + " hook stop")
		if len(f) != 3 || f[0] != s {
			t.Errorf("%q -> %q -> %q", s, shellQuote(s), f)
		}
	}
	for cmd, ours := range map[string]bool{
		"notify-send mindmount hook":                                               false,
		"mindmount hook stop":                                                      false,
		"'/a b/mindmount' hook stop --harness claude-code --repo /m":               true,
		"/tmp/mindmount-dev hook session-start --harness gemini-cli --repo '/m n'": true,
		"mindmount hook stop --harness vim --repo /m":                              false,
	} {
		if isOurCommand(cmd) != ours {
			t.Errorf("isOurCommand(%q) = %v", cmd, !ours)
		}
	}
}

// TestInstallProjectScopeIsPortable (issue 27): the project's .mcp.json,
// usually committed, names no personal absolute path (paths under the
// home become ${HOME}/…), and installing again (for a memory that moved)
// leaves no backup of a
// file install itself created; a file with the user's own entries is
// still backed up.
func TestInstallProjectScopeIsPortable(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	o := InstallOptions{Harness: ClaudeCode, Scope: "project", Home: home, Project: proj,
		Memory: filepath.Join(home, "memory"), Mindmount: filepath.Join(home, "go/bin/mindmount"), MCP: true}
	// Installed again for a memory that moved: the files change.
	for _, m := range []string{"old-memory", "memory"} {
		o.Memory = filepath.Join(home, m)
		if _, err := Install(o); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(proj, ".mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), home) || !strings.Contains(string(b), `"${HOME}/memory"`) || !strings.Contains(string(b), `"${HOME}/go/bin/mindmount"`) {
		t.Errorf(".mcp.json names a personal path:\n%s", b)
	}
	backups := func() []string {
		var out []string
		filepath.WalkDir(proj, func(p string, d fs.DirEntry, err error) error {
			if strings.Contains(p, ".mindmount-backup-") {
				out = append(out, p)
			}
			return nil
		})
		return out
	}
	if bs := backups(); len(bs) != 0 {
		t.Errorf("backups of files install created: %v", bs)
	}
	// The user's own server beside ours: that file is backed up.
	os.WriteFile(filepath.Join(proj, ".mcp.json"), []byte(`{"mcpServers":{"other":{"command":"x"}}}`), 0o644)
	if _, err := Install(o); err != nil {
		t.Fatal(err)
	}
	if bs := backups(); len(bs) != 1 {
		t.Errorf("backups after changing the user's file: %v, want one", bs)
	}
}

// TestInstallNamesOnlyWhatItWrites: pointed at a mount (MCP false) no
// harness registers an MCP server nor says it did; pointed at a
// repository each one that says "MCP server" wrote the entry in the file
// it names (Codex's config.toml among them).
func TestInstallNamesOnlyWhatItWrites(t *testing.T) {
	entry := []string{`"mcpServers"`, "[mcp_servers.", `"mcp"`}
	hasEntry := func(b []byte) bool {
		for _, e := range entry {
			if strings.Contains(string(b), e) {
				return true
			}
		}
		return false
	}
	for _, h := range []string{ClaudeCode, GeminiCLI, Codex, OpenCode} {
		for _, mcp := range []bool{false, true} {
			home := t.TempDir()
			o := InstallOptions{Harness: h, Scope: "user", Home: home, Memory: "/mem", Mindmount: "/bin/mindmount", MCP: mcp}
			changes, err := Install(o)
			if err != nil {
				t.Fatalf("%s: %v", h, err)
			}
			said := false
			for _, c := range changes {
				b := mustRead(t, c.Path)
				names := strings.Contains(c.Note, "MCP server")
				said = said || names
				switch {
				case names && !mcp:
					t.Errorf("%s at a mount: says %q of %s", h, c.Note, c.Path)
				case names && !hasEntry(b):
					t.Errorf("%s: says %q but %s holds no MCP entry:\n%s", h, c.Note, c.Path, b)
				case !mcp && hasEntry(b):
					t.Errorf("%s at a mount: %s holds an MCP entry:\n%s", h, c.Path, b)
				}
			}
			if mcp && !said {
				t.Errorf("%s at a repository: no MCP server registered (changes %+v)", h, changes)
			}
			if h == Codex {
				_, err := os.Stat(filepath.Join(home, ".codex", "config.toml"))
				if mcp != (err == nil) {
					t.Errorf("codex, MCP %v: config.toml: %v", mcp, err)
				}
			}
		}
	}
}
