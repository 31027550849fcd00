package main

import (
	"context"
	"flag"
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
