package harness

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// InstallOptions says which harness to wire to which memory, and where.
type InstallOptions struct {
	Harness   string // ClaudeCode, Codex, GeminiCLI or OpenCode
	Scope     string // "user" (the harness's files under Home) or "project" (under Project)
	Home      string // the user's home directory
	Project   string // the project directory, for Scope "project"
	Memory    string // absolute path of the memory (repository or mount)
	Mindmount string // absolute path of the mindmount binary the harness will run
	MCP       bool   // also register "mindmount mcp MEMORY" as an MCP server
	// Env is the environment for harness-specific locations (CODEX_HOME,
	// XDG_CONFIG_HOME); nil means none are set.
	Env func(string) string
	// LookPath finds a command through $PATH (exec.LookPath): a project's
	// files name the binary "mindmount" when it finds Mindmount. Nil
	// never does.
	LookPath func(string) (string, error)
	Now      func() time.Time // names backups; nil is time.Now
}

// Change is one settings file install or uninstall changed.
type Change struct {
	Path    string
	Backup  string // the copy taken first; "" when the file did not exist
	Note    string // what changed, for the user
	Removed bool   // the file held only mindmount's entries and was deleted
}

// edit computes a settings file's new content from its current content
// (nil when the file does not exist). A nil result with no error removes
// the file: only ever one that our own entries alone made up.
type edit struct {
	path   string
	note   string
	change func(old []byte) ([]byte, error)
	// onlyOurs, when set, says whether a file holds nothing but
	// mindmount's entries: one install made, which needs no backup.
	onlyOurs func(old []byte) bool
}

// Install adds mindmount's entries to the harness's settings; running it
// again replaces them. Every file is backed up before it is changed,
// except one that holds nothing but mindmount's own entries.
func Install(o InstallOptions) ([]Change, error) { return apply(o, false) }

// Uninstall removes exactly the entries Install adds; the user's own
// entries, and the rest of each file, stay as they are.
func Uninstall(o InstallOptions) ([]Change, error) { return apply(o, true) }

func apply(o InstallOptions, uninstall bool) ([]Change, error) {
	if o.Env == nil {
		o.Env = func(string) string { return "" }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	edits, err := editsFor(o, uninstall)
	if err != nil {
		return nil, err
	}
	// Compute every file first: a file we cannot parse stops the whole
	// install before anything is written.
	results, err := prepare(o, edits)
	defer func() {
		for _, r := range results {
			r.f.close()
		}
	}()
	if err != nil {
		return nil, err
	}
	var changes []Change
	for _, r := range results {
		c, err := r.write(o.Now)
		if err != nil {
			return changes, err
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// editsFor checks o's scope and paths and returns its harness's edits.
func editsFor(o InstallOptions, uninstall bool) ([]edit, error) {
	switch o.Scope {
	case "user":
		if o.Home == "" {
			return nil, errors.New("no home directory")
		}
	case "project":
		if o.Project == "" {
			return nil, errors.New("no project directory")
		}
	default:
		return nil, fmt.Errorf("scope %q: want user or project", o.Scope)
	}
	if !filepath.IsAbs(o.Memory) || !filepath.IsAbs(o.Mindmount) {
		return nil, errors.New("memory and mindmount paths must be absolute")
	}
	switch o.Harness {
	case ClaudeCode:
		return claudeEdits(o, uninstall), nil
	case GeminiCLI:
		return geminiEdits(o, uninstall), nil
	case Codex:
		return codexEdits(o, uninstall), nil
	case OpenCode:
		return opencodeEdits(o, uninstall), nil
	}
	return nil, fmt.Errorf("unknown harness %q (want %s, %s, %s or %s)", o.Harness, ClaudeCode, Codex, GeminiCLI, OpenCode)
}

// prepared is one edit computed and waiting to be written: its settings
// file (open), what it held and what it will hold.
type prepared struct {
	e       edit
	f       *settingsFile
	old     []byte
	existed bool
	next    []byte
}

// prepare opens and computes every edit that changes its file; the files
// it returns are open (the caller closes them), even with an error.
func prepare(o InstallOptions, edits []edit) ([]prepared, error) {
	var results []prepared
	for _, e := range edits {
		// Found inside the user's own folder; a dotfile manager's
		// symlink inside it stays a symlink (the file it names is
		// edited), one leading out of it is refused.
		f, err := openSettings(treeOf(o, e.path), e.path)
		if err != nil {
			return results, err
		}
		old, existed, err := f.read()
		if err != nil {
			f.close()
			return results, err
		}
		next, err := e.change(old)
		if err != nil {
			f.close()
			return results, fmt.Errorf("%s: %w", e.path, err)
		}
		if (next == nil && !existed) || (existed && next != nil && bytes.Equal(next, old)) {
			f.close()
			continue
		}
		results = append(results, prepared{e, f, old, existed, next})
	}
	return results, nil
}

// write backs the file up (unless it holds only our entries, or a backup
// exists already) and writes or removes it.
func (r prepared) write(now func() time.Time) (Change, error) {
	c := Change{Path: r.e.path, Note: r.e.note}
	if prior := r.f.priorBackup(); r.existed && prior != "" {
		c.Backup = filepath.Join(r.f.tree.Dir(), filepath.FromSlash(prior))
	} else if r.existed && (r.e.onlyOurs == nil || !r.e.onlyOurs(r.old)) {
		backup := r.f.rel + backupMark + now().UTC().Format("20060102-150405")
		c.Backup = filepath.Join(r.f.tree.Dir(), filepath.FromSlash(backup))
		if err := r.f.write(backup, r.old, 0o600); err != nil {
			return c, err
		}
	}
	if r.next == nil {
		if err := r.f.remove(); err != nil {
			return c, err
		}
		c.Removed = true
		return c, nil
	}
	// A crash leaves the old settings or the new ones, never half;
	// written where it was read, beneath the tree.
	return c, r.f.write(r.f.rel, r.next, r.f.mode())
}

// shellQuote quotes s for a POSIX shell, which is how the harnesses run a
// hook's command string.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// hookCommand is the command line a harness runs for event; project is
// the harness's variable for the project directory (see shellPath).
func hookCommand(o InstallOptions, event, project string) string {
	return o.shellBinary(project) + " hook " + event + " --harness " + o.Harness + " --repo " + o.shellPath(o.Memory, project)
}

// isOurCommand reports whether a hook command is one mindmount installed:
// "MINDMOUNT hook EVENT --harness NAME --repo DIR", whatever the binary is
// called. The user's own hooks do not have that shape.
func isOurCommand(cmd string) bool {
	f := shellFields(cmd)
	if len(f) < 7 || f[1] != "hook" {
		return false
	}
	return f[3] == "--harness" && KnownHarness(f[4]) && f[5] == "--repo"
}

// shellFields splits a command line the way shellQuote writes one: words
// separated by blanks, single-quoted parts taken literally.
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	in, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted:
			if c == '\'' {
				quoted = false
			} else {
				cur.WriteByte(c)
			}
		case c == '\'':
			quoted, in = true, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
