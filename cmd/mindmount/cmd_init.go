package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/serve/host"
)

// initCommand is "mindmount init".
var initCommand = newCommand(command{
	name:    "init",
	usage:   "init DIR [--user NAME] [--project-branch PROJECT]",
	summary: "create a memory repository (or add what an existing one lacks)",
	help: `Creates DIR as a mindmount memory repository: a git repository (branch main)
holding a base persona (character.md, read-only), a page about the user
(user.md), the folders user_memory/ and character_memory/ for one memory
per file, a transcripts/ inbox, a README.md that teaches an agent how to
use its memory, and a .gitignore that keeps editor temp files and the
generated indexes out of git. Everything is committed as the first commit,
authored "mindmount <mindmount@mindmount.local>".

--user NAME puts the user's name into user.md.

Memories are private: a new repository is created readable by its owner
only (directories 0700, files 0600), and git's core.sharedRepository=0600
tells git and mindmount to keep creating files that way. --shared creates it
the usual way instead (0755/0644, as the umask allows).

Running init on a directory that already is a repository (mindmount or plain
git) only adds the files that are missing, and to an existing .gitignore
the rules of the template's it lacks (a newer mindmount ignores more of what
it generates), and commits just those; it never overwrites an existing
file, so your memories and edits are safe. It says what it added, or that
the repository was already initialised.

init refuses a folder that holds other files and is not a git repository
(your home, /tmp, an unmounted mountpoint with leftovers), and a git
repository owned by someone else: --force does it anyway. It never
changes the mode of a folder that already existed.

A repository made before the program was renamed to mindmount keeps its
daemon state (cursor, settings) in a folder of the old name: init moves it
to .mindmount/, renames the merge drivers in .gitattributes and the rules
of .gitignore, moves the git side (hooks, driver config, sync state), and
commits that as one commit saying so. Daemons refuse such a repository
until then.

--project-branch PROJECT makes DIR a project's memory, kept on the orphan
branch mindmount/memory of the project's repository PROJECT (a URL or a
path): DIR becomes a clone of that branch (and of the pending dreams'
branches), created and pushed there first when the project has none, with
merge: review so every dream waits for approval as a pull request
(docs/pull-requests.md).

Example:
  mindmount init ~/memory --user Ada
  cd ~/memory && git log --stat`,
}, runInit)

// initOptions are the flags of "mindmount init".
type initOptions struct {
	user   string
	shared bool
	force  bool
	// project is --project-branch: the project repository whose memory
	// branch DIR clones (cmd_github.go).
	project string
}

func (o *initOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.user, "user", "", "the user's `NAME`, written into user.md")
	fl.BoolVar(&o.shared, "shared", false, "create a new repository readable by others (0755/0644) instead of private (0700/0600)")
	fl.BoolVar(&o.force, "force", false, "make a repository of a folder that holds other files, or of someone else's git repository")
	fl.StringVar(&o.project, "project-branch", "", "keep the memory on the branch mindmount/memory of the `PROJECT` repository (URL or path); DIR is its clone")
}

// runInit makes (or upgrades) a memory repository.
func runInit(ctx context.Context, o *initOptions, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	if o.project != "" {
		return initProjectBranch(ctx, o, args[0])
	}
	if !o.force {
		if err := host.CheckInitTarget(args[0]); err != nil {
			return err
		}
	}
	return initRepo(args[0], o.user, !o.shared)
}

// initRepo creates or completes the repository at dir (host.InitRepo) and
// says what it did on stdout.
func initRepo(dir, user string, private bool) error {
	res, err := host.InitRepo(dir, host.InitOptions{User: user, Private: private})
	if err != nil {
		return err
	}
	printInit(stdout, dir, user, res)
	return nil
}

// printInit tells the user what host.InitRepo did.
func printInit(out io.Writer, dir, user string, res host.Initialized) {
	if res.Commit == "" && len(res.Created) == 0 && res.Upgraded == nil {
		fmt.Fprintf(out, "%s: already initialised, nothing to add\n", dir)
		if user != "" {
			fmt.Fprintf(out, "user.md exists and was left as it is; edit it to change the user's name\n")
		}
		return
	}
	if res.Upgraded != nil {
		fmt.Fprintf(out, "Upgraded %s, made before the rename:\n", dir)
		for _, l := range res.Upgraded {
			fmt.Fprintf(out, "  %s\n", l)
		}
	}
	switch {
	case res.Fresh:
		fmt.Fprintf(out, "Created mindmount repository %s\n", dir)
	case len(res.Created) > 0:
		fmt.Fprintf(out, "Added to %s:\n", dir)
	}
	for _, p := range res.Created {
		if p == ".gitignore" && len(res.Ignores) > 0 {
			fmt.Fprintf(out, "  .gitignore: the rules %s\n", strings.Join(res.Ignores, ", "))
			continue
		}
		fmt.Fprintf(out, "  %s\n", p)
	}
	if res.Commit != "" {
		fmt.Fprintf(out, "Committed %s: %s\n", gitrepo.ShortHash(res.Commit), gitrepo.Subject(res.Message))
	}
	if res.Fresh {
		fmt.Fprintf(out, "\nNext: edit %s, then try \"mindmount context %s\".\n",
			filepath.Join(dir, "user.md"), dir)
	}
}
