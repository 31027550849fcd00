package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/mindmount/mindmount/hooks"
)

// runGitHook runs a git hook: git calls "mindmount hook pre-commit" from the
// script "mindmount hooks install" writes.
func runGitHook(event string, args []string) error {
	if event != "pre-commit" {
		return fmt.Errorf("unknown git hook %q", event)
	}
	err := hooks.PreCommit(context.Background(), stderr)
	if errors.Is(err, hooks.ErrRefused) {
		return exitError{1} // the lines are printed; git prints nothing more
	}
	return err
}

// installGitHooks installs (or removes) the pre-commit hook and the merge
// drivers in the git clone repo.
func installGitHooks(repo string, uninstall bool) error {
	if uninstall {
		if err := hooks.Uninstall(repo); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Removed mindmount's pre-commit hook and merge drivers from %s\n", repo)
		return nil
	}
	if err := hooks.Install(repo); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Installed in %s: the pre-commit hook (mindmount hook pre-commit) and the merge drivers mindmount-cursor and mindmount-memory\n", repo)
	return nil
}

// githooksCommand is "mindmount githooks".
var githooksCommand = newCommand(command{
	name:    "merge-memory",
	usage:   "merge-memory BASE OURS THEIRS PATH",
	summary: "git merge driver for memory files",
	help: `Merges two versions of a memory file for git and writes the result to OURS:
the access log is the union of both sides' lines ordered by date, and the
frontmatter keys and sections merge three-way. When the same key or section
was changed on both sides, your version stays and theirs is written beside
it as a retired memory (status: superseded, superseded_by: yours), never
with conflict markers; git add it. Other files merge by mindmount's rule
for their path (hooks.MergeFile): text line by line as "git merge-file"
does, conflicts marked as git marks them.

"mindmount hooks install REPO" registers it:

  git config merge.mindmount-memory.driver "mindmount merge-memory %O %A %B %P"
  echo "*.md merge=mindmount-memory" >> .git/info/attributes`,
}, runGithooks)

// runGithooks installs or removes the git hooks.
func runGithooks(_ context.Context, _ *noOptions, args []string) error {
	if len(args) != 4 {
		return errUsage
	}
	err := hooks.MemoryDriver(args[0], args[1], args[2], args[3], stderr)
	if errors.Is(err, hooks.ErrConflict) {
		return exitError{1}
	}
	return err
}
