package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/gitrepo"
	"github.com/mindmount/mindmount/template"
)

// initCommand is "mindmount init".
var initCommand = newCommand(command{
	name:    "init",
	usage:   "init DIR [--user NAME]",
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

Example:
  mindmount init ~/memory --user Ada
  cd ~/memory && git log --stat`,
}, runInit)

// initOptions are the flags of "mindmount init".
type initOptions struct {
	user   string
	shared bool
	force  bool
}

func (o *initOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.user, "user", "", "the user's `NAME`, written into user.md")
	fl.BoolVar(&o.shared, "shared", false, "create a new repository readable by others (0755/0644) instead of private (0700/0600)")
	fl.BoolVar(&o.force, "force", false, "make a repository of a folder that holds other files, or of someone else's git repository")
}

// runInit makes (or upgrades) a memory repository.
func runInit(_ context.Context, o *initOptions, args []string) error {
	if len(args) != 1 {
		return errUsage
	}
	if !o.force {
		if err := initTarget(args[0]); err != nil {
			return err
		}
	}
	return initRepo(args[0], o.user, !o.shared)
}

// initTarget refuses to make a repository of a folder init has no business
// in: one holding other files that is not a git repository, or a git
// repository owned by another user. A missing or empty folder, and a
// repository of the caller's (mindmount or plain git), are fine.
func initTarget(dir string) error {
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		if uid, _ := statOwner(st); int(uid) != os.Getuid() {
			return fmt.Errorf("%s is a git repository owned by uid %d, not you: make your own with mindmount init NEWDIR (or pass --force to add mindmount's files to it)", dir, uid)
		}
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s holds %d other entries (%s, ...) and is not a git repository: init makes a new memory repository in a new or empty folder, e.g. mindmount init %s (or pass --force to make this one)",
			dir, len(ents), ents[0].Name(), filepath.Join(dir, "memory"))
	}
	return nil
}

// initRepo creates or completes the repository at dir and commits the
// template files it added, and says what it did on stdout.
func initRepo(dir, user string, private bool) error {
	return initRepoTo(stdout, dir, user, private)
}

// initRepoTo is initRepo telling out (a daemon that makes a repository
// says nothing on its stdout).
func initRepoTo(out io.Writer, dir, user string, private bool) error {
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("%s exists and is not a directory", dir)
	}
	_, statErr := os.Stat(dir)
	existed := statErr == nil
	fresh := false
	r, err := gitrepo.Open(dir)
	if errors.Is(err, gitrepo.ErrNotRepo) {
		r, err = gitrepo.Init(dir)
		fresh = true
	}
	if err != nil {
		return err
	}
	if fresh && private {
		if err := r.SetPrivate(true); err != nil {
			return err
		}
	}
	var up *upgrade // a repository made before the rename
	if !fresh {
		if up, err = upgradeRepo(r); err != nil {
			return fmt.Errorf("upgrade %s: %w", dir, err)
		}
	}
	created, err := template.Write(r.Dir(), user, false)
	if err != nil {
		return err
	}
	var ignores []string // rules appended to an existing .gitignore
	if !fresh && !slices.Contains(created, ".gitignore") {
		if ignores, err = template.CompleteIgnores(r.Dir()); err != nil {
			return err
		}
		if len(ignores) > 0 {
			created = append(created, ".gitignore")
		}
	}
	if err := initGitHooks(r.Dir()); err != nil { // cmd_githooks.go: pre-commit hook and merge drivers
		// The repository works without them; only a revert of a
		// consolidation then replays the reverted messages.
		slog.Warn("could not install mindmount's git hooks", "err", err)
	}
	if len(created) == 0 && up == nil {
		fmt.Fprintf(out, "%s: already initialised, nothing to add\n", dir)
		if user != "" {
			fmt.Fprintf(out, "user.md exists and was left as it is; edit it to change the user's name\n")
		}
		return nil
	}
	var changes []gitrepo.Change
	if up != nil {
		changes = append(changes, up.changes...)
	}
	for _, p := range created {
		data, err := os.ReadFile(filepath.Join(r.Dir(), filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		changes = append(changes, gitrepo.Change{Path: p, Data: data})
	}
	msg := initMessage(created)
	if len(ignores) > 0 && len(created) == 1 {
		msg = "mindmount init: add " + strings.Join(ignores, ", ") + " to .gitignore"
	}
	if up != nil {
		msg = up.message(created)
	}
	hash, err := tracker.Alone{Repo: r}.Apply(context.Background(), tracker.Change{Changes: changes, Message: msg, Author: gitrepo.Mindmount})
	if err != nil {
		return fmt.Errorf("commit the template: %w", err)
	}
	if fresh && private {
		// Last, so that what git and the hooks created is narrowed too. A
		// folder that existed keeps its mode, and so does whatever it held:
		// only what init made is narrowed.
		if err := narrowNew(r.Dir(), existed, created); err != nil {
			return err
		}
	}
	if up != nil {
		fmt.Fprintf(out, "Upgraded %s, made before the rename:\n", dir)
		for _, l := range up.lines {
			fmt.Fprintf(out, "  %s\n", l)
		}
	}
	switch {
	case fresh:
		fmt.Fprintf(out, "Created mindmount repository %s\n", dir)
	case len(created) > 0:
		fmt.Fprintf(out, "Added to %s:\n", dir)
	}
	for _, p := range created {
		if p == ".gitignore" && len(ignores) > 0 {
			fmt.Fprintf(out, "  .gitignore: the rules %s\n", strings.Join(ignores, ", "))
			continue
		}
		fmt.Fprintf(out, "  %s\n", p)
	}
	if hash != "" {
		fmt.Fprintf(out, "Committed %s: %s\n", gitrepo.ShortHash(hash), gitrepo.Subject(msg))
	}
	if fresh {
		fmt.Fprintf(out, "\nNext: edit %s, then try \"mindmount context %s\".\n",
			filepath.Join(dir, "user.md"), dir)
	}
	return nil
}

// initMessage names the added files: the ones that matter in the subject
// (placeholders like .gitkeep only when nothing else was added), and every
// file in the body when the subject could not hold them all.
func initMessage(created []string) string {
	var main []string
	for _, p := range created {
		if filepath.Base(p) != ".gitkeep" {
			main = append(main, p)
		}
	}
	if len(main) == 0 {
		main = created
	}
	// The persona and the user page first: they are what a reader of
	// "git log" looks for.
	rank := map[string]int{"character.md": 0, "user.md": 1, "README.md": 2}
	sort.SliceStable(main, func(i, j int) bool {
		ri, ok := rank[main[i]]
		if !ok {
			ri = 3
		}
		rj, ok := rank[main[j]]
		if !ok {
			rj = 3
		}
		return ri < rj
	})
	subject := "mindmount init: add "
	if len(main) > 4 {
		subject += strings.Join(main[:4], ", ") + fmt.Sprintf(" and %d more", len(created)-4)
	} else if len(main) < len(created) {
		subject += strings.Join(main, ", ") + fmt.Sprintf(" and %d more", len(created)-len(main))
	} else {
		return subject + strings.Join(main, ", ")
	}
	return subject + "\n\nAdded:\n  " + strings.Join(created, "\n  ") + "\n"
}

// narrowNew makes private what init created in dir: everything when dir
// is new; else .git and the created paths (and the folders init made for
// them), never dir itself.
func narrowNew(dir string, existed bool, created []string) error {
	if !existed {
		return makePrivate(dir)
	}
	if err := makePrivate(filepath.Join(dir, ".git")); err != nil {
		return err
	}
	for _, p := range created {
		for rel := p; rel != "." && rel != "/"; rel = path.Dir(rel) {
			if err := makePrivateOne(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
				return err
			}
		}
	}
	return nil
}

// makePrivateOne narrows one file or folder as makePrivate does.
func makePrivateOne(p string) error {
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&fs.ModeSymlink != 0 {
		return nil
	}
	mode := fi.Mode().Perm() &^ 0o077
	if fi.IsDir() {
		mode |= 0o700
	}
	return os.Chmod(p, mode)
}

// makePrivate narrows a new repository to its owner: directories 0700,
// files 0600 (0700 when executable), .git included. Memories are private;
// the root's 0700 alone already keeps other users out.
func makePrivate(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		mode := fi.Mode().Perm() &^ 0o077
		if d.IsDir() {
			mode |= 0o700
		}
		return os.Chmod(p, mode)
	})
}
