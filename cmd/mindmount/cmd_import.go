package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/migrate"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/hooks"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/serve/host"
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

Every file an import would write is judged as a commit through the mount
is (validation, read_only, secrets in names and content, reported with
file, line and rule, never the value): one refusal refuses the whole
import. A PATH that is a symbolic link, a markdown file in it that is one,
and a name with control characters are refused. Run as root on folders
another user owns, import runs as that user.

Example:

    mindmount import viral ~/memory/alice ~/mindmount-alice
    mindmount check ~/mindmount-alice`,
}, runImport)

// runImport imports another memory system's layout. Run as root on a
// source or destination another user owns, it runs as that user (asOwner).
func runImport(ctx context.Context, _ *noOptions, args []string) error {
	if len(args) < 1 {
		return errUsage
	}
	if len(args) >= 2 && len(args) <= 3 && (args[0] == "viral" || args[0] == "claude" || args[0] == "letta") {
		paths, err := absAll(args[1:]...)
		if err != nil {
			return err
		}
		if handed, err := asOwner(ctx, append([]string{"import", args[0]}, paths...), paths...); handed {
			return err
		}
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
	if err := noLinkedRoot(src); err != nil {
		return err
	}
	isGit := isGitWorkTree(src)
	if isGit {
		if err := requireClean(src); err != nil {
			return err
		}
	}
	dir, fresh, err := viralTarget(src, dest, isGit)
	if err != nil {
		return err
	}
	var r *gitrepo.Repo
	if isGit {
		r, err = gitrepo.Open(dir)
	} else {
		r, err = gitrepo.Init(dir)
		fresh = true
	}
	if err != nil {
		return err
	}
	unlock, err := lockForImport(r, dir)
	if err != nil {
		return err
	}
	defer unlock()
	root, err := openSource(dir)
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
	if err := importGate(r, plan); err != nil {
		return err
	}
	changes, err := applyPlan(root, plan)
	if err != nil {
		return err
	}
	// The template's files the repository lacks (README.md, .mindmount/,
	// .gitattributes, .gitignore or its missing rules) join the same commit.
	added, lines, err := templateChanges(root, dir, plan.Lines)
	if err != nil {
		return err
	}
	changes = append(changes, added...)
	if err := hooks.Install(dir); err != nil {
		fmt.Fprintf(stderr, "mindmount: could not install mindmount's git hooks: %v\n", err)
	}
	msg := "mindmount import viral: convert a viral-git-agent-memory repository\n\n" + strings.Join(lines, "\n")
	hash, err := tracker.Alone{Repo: r, Door: tracker.DoorImport}.Apply(context.Background(), tracker.Change{Changes: changes, Message: msg, Author: gitrepo.Mindmount})
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
	reportImport(src, dir, lines, hash, msg)
	fmt.Fprintf(stdout, "\nNext: mindmount check %s, then mindmount mount %s DIR (or mindmount watch %s).\n", dir, dir, dir)
	return nil
}

// viralTarget is the folder a viral import converts: src itself, or a
// fresh clone of it at dest (fresh true).
func viralTarget(src, dest string, isGit bool) (string, bool, error) {
	if dest == "" {
		return src, false, nil
	}
	if !isGit {
		return "", false, fmt.Errorf("%s is not a git repository, so there is no history to clone to %s: import it in place (mindmount import viral %s)", src, dest, src)
	}
	if ents, err := os.ReadDir(dest); err == nil && len(ents) > 0 {
		return "", false, fmt.Errorf("%s exists and is not empty: name a new folder for the imported repository", dest)
	}
	// The source's configuration is not ours: git runs scrubbed
	// (host.Git), and a clone copies objects, never the config.
	if out, err := host.Git("/", "clone", "-q", "--no-hardlinks", "--", src, dest).CombinedOutput(); err != nil {
		return "", false, fmt.Errorf("git clone %s %s: %v: %s", src, dest, err, memgraph.ClipLine(string(out), 400))
	}
	// The clone's origin is the old repository: a mindmount sync must
	// not push the converted memory into it.
	host.Git(dest, "remote", "remove", "origin").Run()
	return dest, true, nil
}

// templateChanges writes the template's files dir lacks (and the
// .gitignore rules it misses) and returns them as changes, with planLines
// and a line for each, every line made safe to print.
func templateChanges(root *os.Root, dir string, planLines []string) ([]gitrepo.Change, []string, error) {
	created, err := template.Write(dir, "", false)
	if err != nil {
		return nil, nil, err
	}
	lines := append([]string{}, planLines...)
	freshIgnore := slices.Contains(created, ".gitignore")
	if !freshIgnore {
		ignores, err := template.CompleteIgnores(dir)
		if err != nil {
			return nil, nil, err
		}
		if len(ignores) > 0 {
			created = append(created, ".gitignore")
			lines = append(lines, ".gitignore: the rules "+strings.Join(ignores, ", "))
		}
	}
	var changes []gitrepo.Change
	for _, p := range created {
		data, err := root.ReadFile(filepath.FromSlash(p))
		if err != nil {
			return nil, nil, err
		}
		changes = append(changes, gitrepo.Change{Path: p, Data: data})
		if p != ".gitignore" || freshIgnore {
			lines = append(lines, p+" added")
		}
	}
	return changes, safeLines(lines), nil
}

// safeLines makes each line one printable line, whatever a name held.
func safeLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = memgraph.SafeLine(l)
	}
	return out
}

// lockForImport makes the import the repository's one writer: refused
// while serve or a daemon serves dir, and holding the daemon lock until
// unlock.
func lockForImport(r *gitrepo.Repo, dir string) (func(), error) {
	if pid, served := host.ServedBy(dir); served {
		return nil, fmt.Errorf("mindmount serve (pid %s) serves %s: stop it first, so that the import is not a second writer beside it", pid, dir)
	}
	unlock, err := r.LockDaemon()
	if errors.Is(err, gitrepo.ErrDaemonRunning) {
		return nil, fmt.Errorf("a mindmount daemon serves %s: stop it first, so that the import is not a second writer beside it", dir)
	}
	return unlock, err
}

// reportImport prints what an import did and the commit it made.
func reportImport(src, dir string, lines []string, hash, msg string) {
	fmt.Fprintf(stdout, "Imported %s into %s:\n", memgraph.SafeLine(src), memgraph.SafeLine(dir))
	for _, l := range lines {
		fmt.Fprintf(stdout, "  %s\n", l)
	}
	if hash != "" {
		fmt.Fprintf(stdout, "Committed %s: %s\n", gitrepo.ShortHash(hash), gitrepo.Subject(msg))
	}
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
// into its commit nor leave it behind in a clone. The tree is read with
// go-git, which runs no program its configuration names (a source is
// not ours to trust: core.fsmonitor, filters).
func requireClean(dir string) error {
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return fmt.Errorf("open the git repository %s: %w", dir, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return fmt.Errorf("git status in %s: %w", dir, err)
	}
	st, err := wt.Status()
	if err != nil {
		return fmt.Errorf("git status in %s: %w", dir, err)
	}
	if n := len(st); n > 0 && !st.IsClean() {
		return fmt.Errorf("%s has %d uncommitted change(s) (git -C %s status): commit or remove them first, so that the import keeps everything", dir, n, dir)
	}
	return nil
}

// noLinkedRoot refuses an import source that is itself a symbolic link:
// a link planted where the user's folder was expected (eve's ~/.claude
// pointing at bob's) would import another's files into the repository
// built for this user. A folder on the way that is a link of a user other
// than root and the one importing (root given eve's
// ~/.claude/projects/p/memory, ~/.claude her link to bob's) is refused
// too; the system's own links (/home to /data/home) are root's. Links
// inside the source are refused by migrate.
func noLinkedRoot(src string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("%s: %w", memgraph.SafeLine(src), errLinkedSource)
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	me := uint32(os.Geteuid())
	for p := filepath.Dir(abs); p != filepath.Dir(p); p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 && st.Uid != me {
			return fmt.Errorf("%s: %w (%s, another user's)", memgraph.SafeLine(src), errLinkedSource, memgraph.SafeLine(p))
		}
	}
	return nil
}

// errLinkedSource is noLinkedRoot's refusal.
var errLinkedSource = errors.New("the import source is a symbolic link: name the folder itself")

// openSource opens the import source dir beneath which every read stays
// (os.Root), refusing a dir that is a symbolic link, or that was swapped
// for another folder between the check and the open.
func openSource(dir string) (*os.Root, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: %w", memgraph.SafeLine(dir), errLinkedSource)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	if got, err := root.Stat("."); err != nil || !os.SameFile(fi, got) {
		root.Close()
		return nil, fmt.Errorf("%s: %w", memgraph.SafeLine(dir), errLinkedSource)
	}
	return root, nil
}

// errImportRefused means an import holds a file the tracker would not
// commit; the problems are printed, file and rule, never a secret.
var errImportRefused = errors.New("the import is refused: nothing was written or committed")

// importGate asks the gate (tracker.Check, as an import: every secret in a
// file counts, and a file HEAD holds exactly as the template made it is
// the import's to replace) about every file an import would write, before
// anything is written. It prints each problem and refuses the whole
// import; the commit asks the gate again.
func importGate(r *gitrepo.Repo, plan migrate.Plan) error {
	changes := make([]gitrepo.Change, len(plan.Changes))
	for i, c := range plan.Changes {
		changes[i] = gitrepo.Change{Path: c.Path, Data: c.Data, Delete: c.Delete}
	}
	err := tracker.Alone{Repo: r, Door: tracker.DoorImport}.Check(tracker.Change{Changes: changes})
	var refused *tracker.RefusedError
	if !errors.As(err, &refused) {
		return err
	}
	for _, p := range refused.Problems {
		fmt.Fprintln(stderr, p.String())
	}
	n := len(refused.Problems)
	return fmt.Errorf("%w (%d %s)", errImportRefused, n, memgraph.Plural(n, "problem", "problems"))
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
	if err := noLinkedRoot(src); err != nil {
		return err
	}
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
	r, err := importDest(dest)
	if err != nil {
		return err
	}
	unlock, err := lockForImport(r, dest)
	if err != nil {
		return err
	}
	defer unlock()
	from, err := openSource(srcDir)
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
	if err := importGate(r, plan); err != nil {
		return err
	}
	changes, err := applyPlan(to, plan)
	if err != nil {
		return err
	}
	lines := safeLines(plan.Lines)
	msg := fmt.Sprintf("mindmount import %s: %d files from %s\n\n%s", format, len(changes), memgraph.SafeLine(filepath.Base(filepath.Clean(src))), strings.Join(lines, "\n"))
	hash, err := tracker.Alone{Repo: r, Door: tracker.DoorImport}.Apply(context.Background(), tracker.Change{Changes: changes, Message: msg, Author: gitrepo.Mindmount})
	if err != nil {
		return fmt.Errorf("commit the import: %w", err)
	}
	reportImport(src, dest, lines, hash, msg)
	return nil
}

// importDest opens the mindmount repository dest, made (private) when the
// folder is missing or empty.
func importDest(dest string) (*gitrepo.Repo, error) {
	if !host.IsMindmountRepo(dest) {
		if ents, err := os.ReadDir(dest); err == nil && len(ents) > 0 {
			return nil, fmt.Errorf("%s is not a mindmount repository and not empty: name a mindmount repository or a new folder", dest)
		}
		if err := os.MkdirAll(dest, 0o700); err != nil {
			return nil, err
		}
		if _, err := host.InitRepo(dest, host.InitOptions{Private: true}); err != nil {
			return nil, err
		}
	}
	if err := requireMindmountRepo(dest); err != nil {
		return nil, err
	}
	return gitrepo.Open(dest)
}

// onlyFile is an fs.FS that shows one file of its folder (a CLAUDE.md
// named on the command line) and nothing else.
type onlyFile struct {
	fs.FS
	name string
}

// Lstat and ReadLink keep the folder's own answers (fs.ReadLinkFS), so
// that a link is seen as a link.
func (o onlyFile) Lstat(name string) (fs.FileInfo, error) {
	if name != o.name {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: fs.ErrNotExist}
	}
	return fs.Lstat(o.FS, name)
}

func (o onlyFile) ReadLink(name string) (string, error) {
	if name != o.name {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrNotExist}
	}
	return fs.ReadLink(o.FS, name)
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
