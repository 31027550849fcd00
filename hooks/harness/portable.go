package harness

import (
	"path/filepath"
	"strings"
)

// A project's settings and instruction files are usually committed, so
// with Scope "project" no personal absolute path is written into them:
// a path inside the project is written relative to it (or through the
// harness's variable for the project directory), a path under the home
// through the harness's variable for the home, and the mindmount binary
// by its name when $PATH finds this very binary. Anything else (a memory
// under /srv) is not personal and stays as it is. The user scope writes
// absolute paths: those files never leave the machine.

// where says how a path lies: inside the project, under the home, or
// elsewhere; rest is the part below the project or the home ("" for the
// directory itself).
type where int

const (
	elsewhere where = iota
	inProject
	inHome
)

// locate places p for the project's files. The project is checked first:
// a checkout usually sits under the home, and a path inside it must be
// written relative to it, not to the home.
func (o InstallOptions) locate(p string) (where, string) {
	if o.Scope != "project" {
		return elsewhere, ""
	}
	for _, base := range []struct {
		dir string
		w   where
	}{{o.Project, inProject}, {o.Home, inHome}} {
		if base.dir == "" {
			continue
		}
		dir := filepath.Clean(base.dir)
		if p == dir {
			return base.w, ""
		}
		if rest, ok := strings.CutPrefix(p, strings.TrimSuffix(dir, "/")+"/"); ok {
			return base.w, rest
		}
	}
	return elsewhere, ""
}

// onPath reports whether the harness finds this mindmount binary by its
// name through $PATH (o.LookPath), so a project file can name it
// "mindmount".
func (o InstallOptions) onPath() bool {
	if o.Scope != "project" || o.LookPath == nil {
		return false
	}
	found, err := o.LookPath("mindmount")
	if err != nil {
		return false
	}
	if real, err := filepath.EvalSymlinks(found); err == nil {
		found = real
	}
	self := o.Mindmount
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	return found == self
}

// dataPath writes p into a data file that expands home (Claude Code's
// .mcp.json and Gemini CLI's settings.json: "${HOME}"; OpenCode's
// opencode.json: "{env:HOME}"); a path inside the project is relative
// to it, where the harness starts its servers.
func (o InstallOptions) dataPath(p, home string) string {
	switch w, rest := o.locate(p); w {
	case inProject:
		return relative(rest)
	case inHome:
		return joinRest(home, rest)
	}
	return p
}

// shellPath writes p as one word of a shell command line (a hook's
// command), expanding the home and the project directory when it runs;
// project names the harness's variable for the project directory ("" for
// none: the path is relative to where the hook runs, the project).
func (o InstallOptions) shellPath(p, project string) string {
	switch w, rest := o.locate(p); w {
	case inProject:
		if project == "" {
			return shellQuote(relative(rest))
		}
		return joinRest(`"$`+project+`"`, shellQuote(rest))
	case inHome:
		return joinRest(`"$HOME"`, shellQuote(rest))
	}
	return shellQuote(p)
}

// prosePath writes p for an agent to read in an instruction file: ~/…
// under the home, relative inside the project.
func (o InstallOptions) prosePath(p string) string {
	switch w, rest := o.locate(p); w {
	case inProject:
		return relative(rest)
	case inHome:
		return joinRest("~", rest)
	}
	return p
}

// binary is the mindmount binary as a data file names it.
func (o InstallOptions) binary(home string) string {
	if o.onPath() {
		return "mindmount"
	}
	return o.dataPath(o.Mindmount, home)
}

// shellBinary is the mindmount binary as a hook's command line names it.
func (o InstallOptions) shellBinary(project string) string {
	if o.onPath() {
		return "mindmount"
	}
	return o.shellPath(o.Mindmount, project)
}

func relative(rest string) string {
	if rest == "" {
		return "."
	}
	return rest
}

// joinRest is base/rest, or base alone for the directory itself ("" for
// an empty shell word would be written ”).
func joinRest(base, rest string) string {
	if rest == "" || rest == "''" {
		return base
	}
	return base + "/" + rest
}
