package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mindmount/mindmount/cmd/mindmount/internal/host"
	"github.com/mindmount/mindmount/cmd/mindmount/internal/migrate"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/gitrepo"
	"github.com/mindmount/mindmount/hooks"
	"github.com/mindmount/mindmount/template"
)

// importCommand is "mindmount import".
var importCommand = newCommand(command{
	name:    "import",
	usage:   "import viral PATH [REPO] | import claude PATH REPO | import letta PATH REPO",
	summary: "turn another memory system's repository into a mindmount repository",
	help: `Imports the memory of another system.

  mindmount import viral PATH [REPO]
      a viral-git-agent-memory repository (SOUL.md, USER.md, USER_memory/,
      SOUL_memory/, or the older user_memory/ and character_memory/).
      With REPO, PATH is cloned to REPO first and PATH is left as it was;
      without, PATH itself is converted. Its history stays: one commit on
      top converts it. SOUL.md becomes character.md and USER.md user.md;
      every memory moves to user_memory/ or character_memory/ with a
      description (its title) added in front of its text, status:
      contradicted when it was contradicted and pinned: true when it was
      pinned; the old index files go (mindmount makes them). A repository
      with uncommitted changes is refused: commit them first.

  mindmount import claude PATH REPO
      Claude Code's file memory: PATH is ~/.claude (CLAUDE.md and every
      project's auto memory in projects/*/memory/), one project's memory
      folder (holding MEMORY.md), or a CLAUDE.md file. CLAUDE.md becomes
      the block system/claude-code.md (always in context); a memory of
      type user a user memory, of type feedback a character memory; project
      and reference notes and MEMORY.md go to claude-code/PROJECT/, read on
      demand.

  mindmount import letta PATH REPO
      a Letta MemFS folder: system/persona.md becomes character.md,
      system/human.md user.md, other system/ files stay always-in-context
      blocks, everything else external memory at the same path.

claude and letta import into REPO, a mindmount repository (made with
mindmount init when missing), in one commit, never replacing a file there
(a name in use gets -2); stop a daemon serving REPO first.

Example:

    mindmount import viral ~/memory/alice ~/mindmount-alice
    mindmount check ~/mindmount-alice`,
}, runImport)

// runImport imports another memory system's layout.
func runImport(_ context.Context, _ *noOptions, args []string) error {
	if len(args) < 1 {
		return errUsage
	}
	switch args[0] {
	case "viral":
		if len(args) != 2 && len(args) != 3 {
			fmt.Fprintln(stderr, "mindmount import viral: need PATH and, optionally, REPO (mindmount import viral PATH [REPO])")
			return exitError{2}
		}
		dest := ""
		if len(args) == 3 {
			dest = args[2]
		}
		return importViral(args[1], dest)
	case "claude", "letta":
		if len(args) != 3 {
			fmt.Fprintf(stderr, "mindmount import %s: need PATH and REPO (mindmount import %s PATH REPO)\n", args[0], args[0])
			return exitError{2}
		}
		return importInto(args[0], args[1], args[2])
	}
	fmt.Fprintf(stderr, "mindmount import: unknown format %q (one of: viral, claude, letta)\n", args[0])
	return exitError{2}
}

// importViral converts the viral-git-agent-memory repository at src, in
// place or (dest != "") in a clone at dest.
func importViral(src, dest string) error {
	if err := requireDir(src); err != nil {
		return err
	}
	isGit := isGitWorkTree(src)
	if isGit {
		if err := requireClean(src); err != nil {
			return err
		}
	}
	dir := src
	fresh := false
	if dest != "" {
		if !isGit {
			return fmt.Errorf("%s is not a git repository, so there is no history to clone to %s: import it in place (mindmount import viral %s)", src, dest, src)
		}
		if ents, err := os.ReadDir(dest); err == nil && len(ents) > 0 {
			return fmt.Errorf("%s exists and is not empty: name a new folder for the imported repository", dest)
		}
		if out, err := exec.Command("git", "clone", "-q", "--no-hardlinks", "--", src, dest).CombinedOutput(); err != nil {
			return fmt.Errorf("git clone %s %s: %v: %s", src, dest, err, strings.TrimSpace(string(out)))
		}
		// The clone's origin is the old repository: a mindmount sync must
		// not push the converted memory into it.
		exec.Command("git", "-C", dest, "remote", "remove", "origin").Run()
		dir, fresh = dest, true
	}
	var r *gitrepo.Repo
	var err error
	if isGit {
		r, err = gitrepo.Open(dir)
	} else {
		r, err = gitrepo.Init(dir)
		fresh = true
	}
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if !migrate.LooksViral(root.FS()) {
		return fmt.Errorf("%s does not look like a viral-git-agent-memory repository (no SOUL.md, USER.md, USER_memory/ or SOUL_memory/, no memory without frontmatter), or it is imported already", src)
	}
	plan, err := migrate.Viral(root.FS())
	if err != nil {
		return err
	}
	changes, err := applyPlan(root, plan)
	if err != nil {
		return err
	}
	// The template's files the repository lacks (README.md, .mindmount/,
	// .gitattributes, .gitignore or its missing rules) join the same commit.
	created, err := template.Write(dir, "", false)
	if err != nil {
		return err
	}
	lines := append([]string{}, plan.Lines...)
	freshIgnore := slices.Contains(created, ".gitignore")
	if !freshIgnore {
		ignores, err := template.CompleteIgnores(dir)
		if err != nil {
			return err
		}
		if len(ignores) > 0 {
			created = append(created, ".gitignore")
			lines = append(lines, ".gitignore: the rules "+strings.Join(ignores, ", "))
		}
	}
	for _, p := range created {
		data, err := root.ReadFile(filepath.FromSlash(p))
		if err != nil {
			return err
		}
		changes = append(changes, gitrepo.Change{Path: p, Data: data})
		if p != ".gitignore" || freshIgnore {
			lines = append(lines, p+" added")
		}
	}
	if err := hooks.Install(dir); err != nil {
		fmt.Fprintf(stderr, "mindmount: could not install mindmount's git hooks: %v\n", err)
	}
	msg := "mindmount import viral: convert a viral-git-agent-memory repository\n\n" + strings.Join(lines, "\n")
	hash, err := tracker.Alone{Repo: r}.Apply(context.Background(), tracker.Change{Changes: changes, Message: msg, Author: gitrepo.Mindmount})
	if err != nil {
		return fmt.Errorf("commit the import: %w (the converted files are in the work tree; git checkout -f HEAD && git clean -fd in %s undoes them)", err, dir)
	}
	if fresh && dest != "" {
		if err := r.SetPrivate(true); err != nil {
			return err
		}
		if err := host.MakePrivate(dir); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "Imported %s into %s:\n", src, dir)
	for _, l := range lines {
		fmt.Fprintf(stdout, "  %s\n", l)
	}
	if hash != "" {
		fmt.Fprintf(stdout, "Committed %s: %s\n", gitrepo.ShortHash(hash), gitrepo.Subject(msg))
	}
	fmt.Fprintf(stdout, "\nNext: mindmount check %s, then mindmount mount %s DIR (or mindmount watch %s).\n", dir, dir, dir)
	return nil
}

// applyPlan writes a plan into the work tree beneath root (no path leaves
// it) and returns it as the changes to commit.
func applyPlan(root *os.Root, p migrate.Plan) ([]gitrepo.Change, error) {
	var out []gitrepo.Change
	for _, c := range p.Changes {
		rel := filepath.FromSlash(c.Path)
		if c.Delete {
			if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		} else {
			if err := root.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
				return nil, err
			}
			if err := root.WriteFile(rel, c.Data, 0o644); err != nil {
				return nil, err
			}
		}
		out = append(out, gitrepo.Change{Path: c.Path, Data: c.Data, Delete: c.Delete})
	}
	// Folders the plan emptied (USER_memory/) go too.
	for _, c := range p.Changes {
		if c.Delete {
			if d := filepath.Dir(filepath.FromSlash(c.Path)); d != "." {
				root.Remove(d) // only when empty
			}
		}
	}
	return out, nil
}

// isGitWorkTree reports whether dir is the top of a git work tree.
func isGitWorkTree(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil
}

// requireClean refuses a work tree with uncommitted changes: an import
// commits what it converts, and must neither sweep someone's pending edit
// into its commit nor leave it behind in a clone.
func requireClean(dir string) error {
	out, err := exec.Command("git", "-C", dir, "-c", "safe.directory=*", "status", "--porcelain", "--untracked-files=all").Output()
	if err != nil {
		return fmt.Errorf("git status in %s: %w", dir, err)
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		n := len(strings.Split(s, "\n"))
		return fmt.Errorf("%s has %d uncommitted change(s) (git -C %s status): commit or remove them first, so that the import keeps everything", dir, n, dir)
	}
	return nil
}

// viralHint is the error for a repository in the reference's layout
// given to a command that needs a mindmount repository.
func viralHint(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	if !migrate.LooksViral(root.FS()) {
		return nil
	}
	return fmt.Errorf("%s looks like a viral-git-agent-memory repository: run mindmount import viral %s (or mindmount import viral %s NEWDIR to keep it as it is)", dir, dir, dir)
}

// importInto imports Claude Code's or Letta's memory at src into the
// mindmount repository dest (made when missing), in one commit.
func importInto(format, src, dest string) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	srcDir, only := src, ""
	if !st.IsDir() {
		if format != "claude" || filepath.Base(src) != "CLAUDE.md" {
			return fmt.Errorf("%s: want a folder (or, for claude, a CLAUDE.md file)", src)
		}
		srcDir, only = filepath.Dir(src), "CLAUDE.md"
	}
	if !host.IsMindmountRepo(dest) {
		if ents, err := os.ReadDir(dest); err == nil && len(ents) > 0 {
			return fmt.Errorf("%s is not a mindmount repository and not empty: name a mindmount repository or a new folder", dest)
		}
		if err := os.MkdirAll(dest, 0o700); err != nil {
			return err
		}
		if _, err := host.InitRepo(dest, host.InitOptions{Private: true}); err != nil {
			return err
		}
	}
	if err := requireMindmountRepo(dest); err != nil {
		return err
	}
	r, err := gitrepo.Open(dest)
	if err != nil {
		return err
	}
	unlock, err := r.LockDaemon()
	if errors.Is(err, gitrepo.ErrDaemonRunning) {
		return fmt.Errorf("a mindmount daemon serves %s: stop it first, so that the import is not a second writer beside it", dest)
	}
	if err != nil {
		return err
	}
	defer unlock()
	from, err := os.OpenRoot(srcDir)
	if err != nil {
		return err
	}
	defer from.Close()
	to, err := os.OpenRoot(dest)
	if err != nil {
		return err
	}
	defer to.Close()
	var fsys fs.FS = from.FS()
	if only != "" {
		fsys = onlyFile{fsys, only}
	}
	taken := func(rel string) bool {
		_, err := to.Lstat(filepath.FromSlash(rel))
		return err == nil
	}
	var plan migrate.Plan
	if format == "claude" {
		plan, err = migrate.ClaudeCode(fsys, taken)
	} else {
		plan, err = migrate.Letta(fsys, taken)
	}
	if err != nil {
		return err
	}
	if len(plan.Changes) == 0 {
		return fmt.Errorf("%s holds nothing to import as %s memory", src, format)
	}
	changes, err := applyPlan(to, plan)
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("mindmount import %s: %d files from %s\n\n%s", format, len(changes), filepath.Base(filepath.Clean(src)), strings.Join(plan.Lines, "\n"))
	hash, err := tracker.Alone{Repo: r}.Apply(context.Background(), tracker.Change{Changes: changes, Message: msg, Author: gitrepo.Mindmount})
	if err != nil {
		return fmt.Errorf("commit the import: %w", err)
	}
	fmt.Fprintf(stdout, "Imported %s into %s:\n", src, dest)
	for _, l := range plan.Lines {
		fmt.Fprintf(stdout, "  %s\n", l)
	}
	if hash != "" {
		fmt.Fprintf(stdout, "Committed %s: %s\n", gitrepo.ShortHash(hash), gitrepo.Subject(msg))
	}
	return nil
}

// onlyFile is an fs.FS that shows one file of its folder (a CLAUDE.md
// named on the command line) and nothing else.
type onlyFile struct {
	fs.FS
	name string
}

func (o onlyFile) Open(name string) (fs.File, error) {
	if name != o.name {
		if name == "." {
			return o.FS.Open(name)
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return o.FS.Open(name)
}
