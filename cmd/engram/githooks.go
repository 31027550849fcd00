package main

import "errors"

// runGitHook runs a git hook (pre-commit). Owned by the git-hooks work.
func runGitHook(event string, args []string) error {
	return errors.New("git hook " + event + ": not implemented yet")
}

// installGitHooks installs (or removes) engram's git hooks in repo.
func installGitHooks(repo string, uninstall bool) error {
	return errors.New("git hooks: not implemented yet")
}
