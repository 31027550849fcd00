package main

import (
	"flag"
	"fmt"
)

// "mindmount hooks install|uninstall" puts mindmount's hooks into a git clone
// (cmd_githooks.go) or, with --harness, into an agent harness's settings
// (cmd_harness.go).
func init() {
	var harness, scope string
	register(&command{
		name:    "hooks",
		usage:   "hooks install|uninstall [--harness NAME [--scope user|project]] REPO_OR_MOUNT",
		summary: "install mindmount's git hooks into a clone, or its hooks into an agent harness",
		help: `Without --harness: installs the pre-commit validator and the merge drivers
into the git clone REPO. With --harness (claude-code, codex, gemini-cli,
opencode): wires the harness to the memory at REPO_OR_MOUNT.`,
		flags: func(fl *flag.FlagSet) {
			fl.StringVar(&harness, "harness", "", "agent harness to wire: claude-code, codex, gemini-cli, opencode")
			fl.StringVar(&scope, "scope", "user", "harness settings to change: user or project")
		},
		run: func(fl *flag.FlagSet, args []string) error {
			if len(args) != 2 || (args[0] != "install" && args[0] != "uninstall") {
				return fmt.Errorf("want install or uninstall, then REPO_OR_MOUNT (see mindmount hooks --help)")
			}
			uninstall := args[0] == "uninstall"
			if harness != "" {
				return installHarness(harness, scope, args[1], uninstall)
			}
			return installGitHooks(args[1], uninstall)
		},
	})
}
