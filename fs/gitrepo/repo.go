// Package gitrepo is the git mechanism of a mindmount repository: it writes
// and reads the objects, trees, index and refs, and decides nothing about
// what is committed or by whom (see the root doc.go for who writes).
//
// Every commit of a repository goes through one *Repo, whose internal mutex
// is the queue. A commit writes the blobs of the changed files, rebuilds only
// the trees along the changed paths (unchanged subtrees keep their hashes),
// writes the commit object, moves the branch with a compare-and-swap and
// updates only the touched entries of .git/index, so its cost grows with the
// number of changed files and not with the size of the repository. It never
// scans the working tree on that path: Dirty is the one full walk, meant for
// start-up recovery.
//
// Objects are read through go-git's storage (loose objects and packs) and
// written as loose objects by this package, in the format git itself writes.
package gitrepo

import (
	"errors"
	"fmt"
	"github.com/mindmount/mindmount/memgraph/subtree"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
	"github.com/go-git/go-git/v5/storage"
)

// ErrNotRepo is returned by Open when the directory is not the top of a git
// work tree.
var ErrNotRepo = errors.New("not a git repository")

// ErrIndexLocked is returned when .git/index.lock stays held (by a git
// command running in the repository) for longer than the retry window.
var ErrIndexLocked = errors.New("git index is locked by another process (.git/index.lock)")

// DefaultBranch is the branch Init creates.
const DefaultBranch = "main"

// Author names who made a commit.
type Author struct {
	Name, Email string
}

// String renders the author as git shows it: "Name <email>".
func (a Author) String() string { return a.Name + " <" + a.Email + ">" }

// Change is the new state of one file. Path is repo-relative with '/'.
// Delete removes the file; otherwise Data is its complete content and Exec
// says whether it is executable.
type Change struct {
	Path   string
	Data   []byte
	Delete bool
	Exec   bool
}

// CommitInfo describes one commit.
type CommitInfo struct {
	Hash    string
	Subject string
	Author  Author
	When    time.Time
}

// Repo is one repository opened for writing. All methods are safe for
// concurrent use; commits are serialised.
type Repo struct {
	dir    string        // absolute work tree root
	tree   *subtree.Tree // dir, opened: reads of the work tree go beneath it
	gitDir string        // absolute .git directory (HEAD, index)
	objDir string        // absolute objects directory (differs in linked worktrees)

	// BeforeCommit, when set, runs inside Record after the working tree
	// files of a Worktree commit were written and before the commit is made. Tests use it to inject a
	// crash; an error aborts the commit and is returned by Apply.
	BeforeCommit func() error

	mu       sync.Mutex // the commit queue: held for every write
	store    storage.Storer
	trees    treeCache
	idx      *indexCache
	idxBuf   []byte        // reused encoding buffer of .git/index
	lockTry  time.Duration // how long to wait for a foreign index.lock
	private  bool          // files 0600, directories 0700 (core.sharedRepository=0600)
	unsynced []string      // loose objects written by the commit in progress, not yet flushed

	history history // which commits changed which paths (history.go)

	ignMu   sync.RWMutex
	ignore  gitignore.Matcher // nil until first use
	ignDirs map[string]bool   // directories whose .gitignore was read
}

// Open opens the repository whose work tree root is dir. It returns an error
// wrapping ErrNotRepo when dir has no .git.
func Open(dir string) (*Repo, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	gitDir, err := findGitDir(abs)
	if err != nil {
		return nil, err
	}
	r, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		if errors.Is(err, git.ErrRepositoryNotExists) {
			return nil, fmt.Errorf("%s: %w", abs, ErrNotRepo)
		}
		return nil, fmt.Errorf("open git repository %s: %w", abs, err)
	}
	repo := newRepo(abs, gitDir, r.Storer)
	if repo.tree, err = subtree.Open(abs); err != nil {
		return nil, err
	}
	if cfg, err := r.Storer.Config(); err == nil {
		repo.private = privateMode(cfg.Raw.Section("core").Option("sharedRepository"))
	}
	return repo, nil
}

// privateMode reads git's core.sharedRepository the way git does for the
// permission of the files it creates: "0600" (or any octal mode without
// group and other bits) makes a private repository, whose files mindmount
// then writes 0600 and whose directories 0700. Unset, "umask", "group" or
// "all" keep the usual 0644/0755.
func privateMode(v string) bool {
	if len(v) < 2 || v[0] != '0' {
		return false
	}
	m, err := strconv.ParseUint(v, 8, 32)
	return err == nil && m&0o077 == 0
}

// Tree is the work tree opened by descriptor: the one way to read or stat a
// path in it without following a symbolic link out (see subtree).
func (r *Repo) Tree() *subtree.Tree { return r.tree }

// Private reports whether the repository is private (core.sharedRepository
// is 0600): mindmount's own files are then 0600 and its directories 0700.
func (r *Repo) Private() bool { return r.private }

// NewFilePerm and NewDirPerm are the modes of a file and a directory a
// front creates in the work tree (MCP): 0600 and 0700 in a private
// repository, as mindmount's own writes.
func (r *Repo) NewFilePerm() fs.FileMode { return r.filePerm(false) }

func (r *Repo) NewDirPerm() fs.FileMode { return r.dirPerm() }

// SetPrivate records in .git/config (core.sharedRepository) whether the
// repository is private, so git and mindmount both create files accordingly
// from now on. Existing files keep their modes.
func (r *Repo) SetPrivate(private bool) error {
	cfg, err := r.store.Config()
	if err != nil {
		return err
	}
	core := cfg.Raw.Section("core")
	if private {
		core.SetOption("sharedRepository", "0600")
	} else {
		core.RemoveOption("sharedRepository")
	}
	if err := r.store.SetConfig(cfg); err != nil {
		return err
	}
	r.private = private
	return nil
}

// Init creates a git repository in dir (creating dir if needed) with HEAD on
// the branch main, or opens it when it already is one.
func Init(dir string) (*Repo, error) {
	if r, err := Open(dir); err == nil {
		return r, nil
	} else if !errors.Is(err, ErrNotRepo) {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	_, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName(DefaultBranch)},
	})
	if err != nil {
		return nil, fmt.Errorf("git init %s: %w", dir, err)
	}
	return Open(dir)
}

func newRepo(dir, gitDir string, st storage.Storer) *Repo {
	objDir := filepath.Join(gitDir, "objects")
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		objDir = filepath.Join(common, "objects")
	}
	return &Repo{
		dir:     dir,
		gitDir:  gitDir,
		objDir:  objDir,
		store:   st,
		trees:   newTreeCache(),
		idx:     &indexCache{path: filepath.Join(gitDir, "index")},
		lockTry: 3 * time.Second,
	}
}

// findGitDir returns the git directory of the work tree root dir: dir/.git,
// or the directory a ".git" file ("gitdir: ...") points to.
func findGitDir(dir string) (string, error) {
	p := filepath.Join(dir, ".git")
	fi, err := os.Stat(p)
	if err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("%s: %w", dir, ErrNotRepo)
		}
		return "", err
	}
	if fi.IsDir() {
		return p, nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	line := strings.TrimSpace(string(b))
	target, ok := strings.CutPrefix(line, "gitdir: ")
	if !ok {
		return "", fmt.Errorf("%s: malformed .git file: %w", dir, ErrNotRepo)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	return filepath.Clean(target), nil
}

// GitDir returns the absolute git directory: .git, or where a .git file
// points.
func (r *Repo) GitDir() string { return r.gitDir }

// Dir returns the absolute path of the work tree root.
func (r *Repo) Dir() string { return r.dir }
