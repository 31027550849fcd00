package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/hooks"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/template"
)

// Provisioning: the one way a memory repository is made or completed,
// whoever asks — "mindmount init", "users add", a user serve provisions
// on first use (--auto-users), an import into a new folder. The commit
// goes through the tracker's lone writer (tracker.Alone).

// InitOptions says how to make a repository.
type InitOptions struct {
	User    string // the user's name, written into a new user.md
	Private bool   // a new repository is its owner's only (0700/0600)
}

// Initialized is what InitRepo did, for the caller to report.
type Initialized struct {
	Fresh   bool     // a new git repository was made
	Created []string // template files added (".gitignore" also when rules were appended to it)
	Ignores []string // rules appended to an existing .gitignore
	// Upgraded lists what the upgrade of a repository made before the
	// rename moved or rewrote; nil when there was none.
	Upgraded []string
	Commit   string // the commit made; "" when there was nothing to add
	Message  string // its message
}

// InitRepo creates the memory repository dir, or completes an existing one
// (mindmount or plain git): it adds the template files that are missing,
// never overwriting one, appends the template's .gitignore rules an
// existing one lacks, upgrades a repository made before the rename,
// installs the git hooks, and commits what it added as one commit.
func InitRepo(dir string, o InitOptions) (Initialized, error) {
	var res Initialized
	fi, statErr := os.Stat(dir)
	if statErr == nil && !fi.IsDir() {
		return res, fmt.Errorf("%s exists and is not a directory", dir)
	}
	existed := statErr == nil
	r, err := gitrepo.Open(dir)
	if errors.Is(err, gitrepo.ErrNotRepo) {
		r, err = gitrepo.Init(dir)
		res.Fresh = true
	}
	if err != nil {
		return res, err
	}
	if res.Fresh && o.Private {
		if err := r.SetPrivate(true); err != nil {
			return res, err
		}
	}
	var up *upgrade // a repository made before the rename
	if !res.Fresh {
		if up, err = upgradeRepo(r); err != nil {
			return res, fmt.Errorf("upgrade %s: %w", dir, err)
		}
	}
	if res.Created, err = template.Write(r.Dir(), o.User, false); err != nil {
		return res, err
	}
	if !res.Fresh && !slices.Contains(res.Created, ".gitignore") {
		if res.Ignores, err = template.CompleteIgnores(r.Dir()); err != nil {
			return res, err
		}
		if len(res.Ignores) > 0 {
			res.Created = append(res.Created, ".gitignore")
		}
	}
	if err := hooks.Install(r.Dir()); err != nil {
		// The repository works without them; only a revert of a
		// consolidation then replays the reverted messages.
		slog.Warn("could not install mindmount's git hooks", "err", err)
	}
	if len(res.Created) == 0 && up == nil {
		return res, nil
	}
	var changes []gitrepo.Change
	if up != nil {
		changes = append(changes, up.changes...)
		res.Upgraded = up.lines
	}
	for _, p := range res.Created {
		data, err := os.ReadFile(filepath.Join(r.Dir(), filepath.FromSlash(p)))
		if err != nil {
			return res, err
		}
		changes = append(changes, gitrepo.Change{Path: p, Data: data})
	}
	res.Message = initMessage(res.Created)
	if len(res.Ignores) > 0 && len(res.Created) == 1 {
		res.Message = "mindmount init: add " + strings.Join(res.Ignores, ", ") + " to .gitignore"
	}
	if up != nil {
		res.Message = up.message(res.Created)
	}
	res.Commit, err = tracker.Alone{Repo: r, Door: tracker.DoorInit}.Apply(context.Background(), tracker.Change{Changes: changes, Message: res.Message, Author: gitrepo.Mindmount})
	if err != nil {
		return res, fmt.Errorf("commit the template: %w", err)
	}
	if res.Fresh && o.Private {
		// Last, so that what git and the hooks created is narrowed too. A
		// folder that existed keeps its mode, and so does whatever it held:
		// only what init made is narrowed.
		if err := narrowNew(r.Dir(), existed, res.Created); err != nil {
			return res, err
		}
	}
	return res, nil
}

// CheckInitTarget refuses to make a repository of a folder init has no
// business in: one holding other files that is not a git repository, or a
// git repository owned by another user. A missing or empty folder, and a
// repository of the caller's (mindmount or plain git), are fine.
func CheckInitTarget(dir string) error {
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
		if uid, _ := FileOwner(st); int(uid) != os.Getuid() {
			return fmt.Errorf("%s is a git repository owned by uid %d, not you: make your own with mindmount init NEWDIR (or pass --force to add mindmount's files to it)", dir, uid)
		}
		return nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(ents) > 0 {
		return fmt.Errorf("%s holds %d other %s (%s%s) and is not a git repository: init makes a new memory repository in a new or empty folder, e.g. mindmount init %s (or pass --force to make this one)",
			dir, len(ents), memgraph.Plural(len(ents), "entry", "entries"), ents[0].Name(), memgraph.Plural(len(ents), "", ", ..."), filepath.Join(dir, "memory"))
	}
	return nil
}

// FileOwner is the uid and gid of a file.
func FileOwner(fi os.FileInfo) (uint32, uint32) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid, st.Gid
	}
	return uint32(os.Getuid()), uint32(os.Getgid())
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
		return MakePrivate(dir)
	}
	if err := MakePrivate(filepath.Join(dir, ".git")); err != nil {
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

// makePrivateOne narrows one file or folder as MakePrivate does.
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

// MakePrivate narrows a new repository to its owner: directories 0700,
// files 0600 (0700 when executable), .git included. Memories are private;
// the root's 0700 alone already keeps other users out.
func MakePrivate(dir string) error {
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

// ErrUserExists refuses to add an ID the registry holds already.
var ErrUserExists = errors.New("is registered already")

// ErrUnregisteredDir refuses to make a new user of a folder that is
// already at its place: it may be a repository an operator left there.
var ErrUnregisteredDir = errors.New("exists but is not a registered user: register it with mindmount users add, or move it away")

// NewUser says how AddNewUser adds a user.
type NewUser struct {
	// Entry is the user: its ID and name, and its uid and gid unless
	// Pick chooses them.
	Entry Entry
	// Pick, when set, chooses the uid and gid from the registered users:
	// once before anything is made (a full range makes nothing) and again
	// under the registry lock (AddUserPicking).
	Pick func(users []Entry) (uid, gid uint32, err error)
	// OnlyNew refuses a folder already at ROOT/users/<id>
	// (ErrUnregisteredDir): serve --auto-users never gives whoever asks
	// for a name first what lies there. Without it a mindmount repository
	// there is adopted.
	OnlyNew bool
}

// AddNewUser is the one sequence that adds a user to root, for mindmount
// users add and serve --auto-users alike: the ID and the ids are checked
// against the registry (ErrUserExists, checkIDs, or Pick), the private
// repository ROOT/users/<id> is made (InitRepo) unless a mindmount
// repository is there to adopt, and the user is registered and handed the
// repository (AddUserPicking: the uid picked and checked under the
// registry lock, then the one hand-over). It returns the entry as
// registered and what InitRepo did (zero when a repository was adopted).
func AddNewUser(root string, n NewUser) (Entry, Initialized, error) {
	e, res := n.Entry, Initialized{}
	if err := ValidID(e.ID); err != nil {
		return e, res, err
	}
	users, err := ReadRegistry(root)
	if err != nil {
		return e, res, err
	}
	if slices.ContainsFunc(users, func(u Entry) bool { return u.ID == e.ID }) {
		return e, res, fmt.Errorf("user %q %w", e.ID, ErrUserExists)
	}
	if n.Pick != nil {
		_, _, err = n.Pick(users)
	} else {
		err = checkIDs(users, e)
	}
	if err != nil {
		return e, res, err // nothing is made
	}
	dir := UserDir(root, e.ID)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return e, res, err
	}
	fresh := n.OnlyNew || !IsMindmountRepo(dir)
	if n.OnlyNew {
		err = os.Mkdir(dir, 0o700)
		if errors.Is(err, fs.ErrExist) {
			return e, res, fmt.Errorf("%s %w", dir, ErrUnregisteredDir)
		}
	} else if fresh {
		err = os.MkdirAll(dir, 0o700)
	}
	if err != nil {
		return e, res, err
	}
	if fresh {
		if res, err = InitRepo(dir, InitOptions{User: e.Name, Private: true}); err != nil {
			return e, res, err
		}
	}
	e, err = AddUserPicking(root, e, n.Pick)
	return e, res, err
}
