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
opencode): wires the harness to the memory at REPO_OR_MOUNT.`,
}, runHooks)

// hooksOptions are the flags of "mindmount hooks".
type hooksOptions struct {
	harness string // the agent harness to wire; "" for the git hooks
	scope   string // the harness's settings to change: user or project
}

func (o *hooksOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.harness, "harness", "", "agent harness to wire: claude-code, codex, gemini-cli, opencode")
	fl.StringVar(&o.scope, "scope", "user", "harness settings to change: user or project")
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
