package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mindmount/mindmount/hooks/harness"
	"github.com/mindmount/mindmount/serve/host"
)

// hooksCommand is "mindmount hooks install|uninstall": mindmount's hooks in
// a git clone (cmd_githooks.go) or, with --harness, in an agent harness's
// settings (cmd_harness.go).
var hooksCommand = newCommand(command{
	name:    "hooks",
	usage:   "hooks install|uninstall [--harness NAME [--scope user|project]] REPO_OR_MOUNT",
	summary: "install mindmount's git hooks into a clone, or its hooks into an agent harness",
	help: `Without --harness: installs the pre-commit validator and the merge drivers
into the git clone REPO. With --harness (claude-code, codex, gemini-cli,
opencode): wires the harness to the memory at REPO_OR_MOUNT, in the
harness's settings under your home (--scope user) or in the project's
files of the current folder (--scope project).

A project's files are usually committed, so --scope project writes no
path of your home or of the checkout into them: the binary as
"mindmount" when $PATH finds it, the rest through the harness's variable
for the home or the project, or relative to the project. Each file is
backed up before it changes, except one holding nothing but mindmount's
entries. uninstall removes exactly what install added, and a file that
held only that.

Example:
  mindmount hooks install ~/memory-clone
  mindmount hooks install --harness claude-code ~/mnt`,
}, runHooks)

// hooksOptions are the flags of "mindmount hooks".
type hooksOptions struct {
	harness string // the agent harness to wire; "" for the git hooks
	scope   string // the harness's settings to change: user or project
}

func (o *hooksOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.harness, "harness", "", "agent harness `NAME` to wire: claude-code, codex, gemini-cli, opencode")
	fl.StringVar(&o.scope, "scope", "user", "which harness settings to change, `SCOPE`: user or project")
}

// runHooks installs or removes the git hooks or a harness's entries.
func runHooks(_ context.Context, o *hooksOptions, args []string) error {
	if len(args) != 2 || (args[0] != "install" && args[0] != "uninstall") {
		return usageError{"want install or uninstall, then REPO_OR_MOUNT"}
	}
	uninstall := args[0] == "uninstall"
	if o.harness != "" {
		return installHarness(o.harness, o.scope, args[1], uninstall)
	}
	return installGitHooks(args[1], uninstall)
}

// handOver gives each path that install wrote under project (a settings
// file, its backup, the skills folder) — and every folder on the way to
// it from project — to the owner of the folder it lies in, when that is
// not root: root running "hooks install --scope project" in a person's
// project must not leave files there that the person cannot change. Only
// what root owns is handed over (host.GiveTo's rule: a folder's whole
// content, a regular file only with one link), nothing is changed in a
// folder root owns, and no symbolic link is followed: each folder is
// opened by descriptor with O_NOFOLLOW from project down, so a link
// planted on the way to a file is the end of the walk, never a way out.
func handOver(project string, paths []string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	var first error
	for _, p := range paths {
		rel, err := filepath.Rel(project, p)
		if err != nil || p == "" || rel == "." || !filepath.IsLocal(rel) {
			continue
		}
		if err := host.GiveAlong(project, strings.Split(rel, string(filepath.Separator))); err != nil && first == nil {
			first = fmt.Errorf("handing %s to the project's owner: %w", p, err)
		}
	}
	return first
}

// written lists what an install or uninstall of the harness name wrote
// under project: the settings files kept and their backups, and the
// skills folder.
func written(name, home, project string, changes []harness.Change) []string {
	var paths []string
	for _, c := range changes {
		if !c.Removed {
			paths = append(paths, c.Path)
		}
		paths = append(paths, c.Backup)
	}
	if dir, err := harness.SkillsDir(name, "project", home, project); err == nil {
		paths = append(paths, dir)
	}
	return paths
}
