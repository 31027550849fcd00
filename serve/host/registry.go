package host

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
	"github.com/mindmount/mindmount/serve/remote"
)

// Layout of a serve ROOT.
const (
	// UsersDir holds one mindmount repository per user: ROOT/users/<id>.
	UsersDir = "users"
	// RemovedDir receives the repositories of removed users, never deleted:
	// ROOT/removed/<id>-<time>.
	RemovedDir = "removed"
	// RegistryFile lists the users with their uid, gid and name.
	RegistryFile = "users.json"
	// registryLock serialises edits of the registry (mindmount users add and
	// remove, even while a daemon runs).
	registryLock = ".users.lock"
	// OperatorConfigFile holds the operator's switches for every user
	// (memgraph.OperatorSource; honoured only when root owns it).
	OperatorConfigFile = "config"
	// serveLock is held by the one daemon serving ROOT.
	serveLock = ".serve.lock"
)

// Entry is one user of the registry.
type Entry struct {
	ID   string `json:"id"`
	UID  uint32 `json:"uid"`
	GID  uint32 `json:"gid"`
	Name string `json:"name,omitempty"`
	// UUID is given to the entry when the user is added, and never
	// reused: credentials issued for a user name this entry, so removing
	// a user and adding one with the same ID voids them. Entries written
	// before it existed have none.
	UUID string `json:"uuid,omitempty"`
}

type registry struct {
	Users []Entry `json:"users"`
}

// UserDir is the repository of user id under root.
func UserDir(root, id string) string { return filepath.Join(root, UsersDir, id) }

// RootOf is UserDir's inverse: the ROOT a served user's repository lies
// in (ROOT/users/<id>). A worker, started with its repository's path, finds
// ROOT/config and ROOT/credentials/<id> through it.
func RootOf(userDir string) string { return filepath.Dir(filepath.Dir(userDir)) }

// userDirOf is the one way a command finds the ROOT and user ID of a
// repository it was given: the absolute path with its symbolic links
// resolved (a link to ROOT/users/<id> is that repository, and must meet
// the same daemon), then ROOT/users/<id> by shape. ok is false for any
// other path.
func userDirOf(dir string) (root, id string, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", false
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if filepath.Base(filepath.Dir(abs)) != UsersDir {
		return "", "", false
	}
	return RootOf(abs), filepath.Base(abs), true
}

// ReadRegistry returns the users of root, sorted by ID. A root without a
// registry has no users. Entries with an invalid ID are skipped: a registry
// edited by hand must not make the daemon serve a path outside users/.
func ReadRegistry(root string) ([]Entry, error) {
	b, err := os.ReadFile(filepath.Join(root, RegistryFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	users, err := parseRegistry(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(root, RegistryFile), err)
	}
	return users, nil
}

// parseRegistry reads the registry's JSON: valid, unique IDs only, sorted.
func parseRegistry(b []byte) ([]Entry, error) {
	var reg registry
	if err := json.Unmarshal(b, &reg); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	out := reg.Users[:0]
	for _, e := range reg.Users {
		if ValidID(e.ID) != nil || seen[e.ID] {
			continue
		}
		seen[e.ID] = true
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// editRegistry runs fn on the registry of root under the registry lock and
// writes the result atomically (temp file, rename).
func editRegistry(root string, fn func(reg *registry) error) error {
	if err := os.MkdirAll(filepath.Join(root, UsersDir), 0o755); err != nil {
		return err
	}
	lf, err := os.OpenFile(filepath.Join(root, registryLock), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("lock %s: %w", registryLock, err)
	}
	users, err := ReadRegistry(root)
	if err != nil {
		return err
	}
	reg := registry{Users: users}
	if err := fn(&reg); err != nil {
		return err
	}
	sort.Slice(reg.Users, func(i, j int) bool { return reg.Users[i].ID < reg.Users[j].ID })
	b, err := json.MarshalIndent(reg, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(root, RegistryFile), append(b, '\n'), 0o644)
}

// AddUser registers id under root. The repository ROOT/users/<id> must
// already be a mindmount repository (mindmount users add makes it); it is handed
// to uid:gid so that the user's writes through the mount keep working
// whoever runs the daemon.
func AddUser(root string, e Entry) error {
	_, err := AddUserPicking(root, e, nil)
	return err
}

// AddUserPicking is AddUser where pick, when not nil, chooses the user's
// uid and gid from the registered users while the registry lock is held:
// two processes adding users at once (serve --auto-users beside a
// mindmount users add) never both take the uid they each saw free. It
// returns the entry as registered.
func AddUserPicking(root string, e Entry, pick func(users []Entry) (uid, gid uint32, err error)) (Entry, error) {
	if err := ValidID(e.ID); err != nil {
		return e, err
	}
	dir := UserDir(root, e.ID)
	if !IsMindmountRepo(dir) {
		return e, fmt.Errorf("%s is %w", dir, ErrNotMindmount)
	}
	if e.UUID == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return e, err
		}
		e.UUID = hex.EncodeToString(b[:])
	}
	err := editRegistry(root, func(reg *registry) error {
		for _, u := range reg.Users {
			if u.ID == e.ID {
				return fmt.Errorf("user %q %w", e.ID, ErrUserExists)
			}
		}
		if pick != nil {
			var err error
			if e.UID, e.GID, err = pick(reg.Users); err != nil {
				return err
			}
		}
		if err := checkIDs(reg.Users, e); err != nil {
			return err
		}
		reg.Users = append(reg.Users, e)
		return nil
	})
	if err != nil {
		return e, err
	}
	return e, handOver(dir, e.UID, e.GID)
}

// ErrRootIDs refuses a user with uid or gid 0: a user's worker runs with
// the user's ids, and must never hold root's rights.
var ErrRootIDs = errors.New("uid 0 and gid 0 are root's: a user never runs as root")

// ErrIDTaken refuses a uid or gid another user of the registry has: the
// kernel tells users apart by their ids alone, so two users sharing one
// could read and write each other's memory.
var ErrIDTaken = errors.New("is another user's")

// checkIDs is the registry's rule for the uid and gid of a new entry e
// among users: neither is 0, and no other user has either. An operator
// who is not root may give every user their own ids: such a daemon
// cannot change ids, so every worker runs as the operator anyway.
func checkIDs(users []Entry, e Entry) error {
	if e.UID == 0 || e.GID == 0 {
		return fmt.Errorf("user %s (%d:%d): %w; give it --uid and --gid of its own", e.ID, e.UID, e.GID, ErrRootIDs)
	}
	if euid := os.Geteuid(); euid != 0 && e.UID == uint32(euid) && e.GID == uint32(os.Getegid()) {
		return nil
	}
	for _, u := range users {
		if u.UID == e.UID {
			return fmt.Errorf("uid %d %w (%s); every user needs a uid of its own", e.UID, ErrIDTaken, u.ID)
		}
		if u.GID == e.GID {
			return fmt.Errorf("gid %d %w (%s); every user needs a group of its own", e.GID, ErrIDTaken, u.ID)
		}
	}
	return nil
}

// UIDInUse reports, for a uid an operator did not choose (mindmount users
// add without --uid, serve --auto-users), whether it belongs to someone
// already: a registered user, an account of the system's passwd database
// (os/user), or the owner of a file near the top of root (ROOT/* and
// ROOT/*/*: a removed user's credentials and repository keep their uid,
// and a new user given it would read them).
func UIDInUse(root string, users []Entry) func(uid uint32) bool {
	owners := map[uint32]bool{}
	for _, u := range users {
		owners[u.UID] = true
	}
	top, _ := os.ReadDir(root)
	for _, e := range top {
		p := filepath.Join(root, e.Name())
		if fi, err := os.Lstat(p); err == nil {
			uid, _ := FileOwner(fi)
			owners[uid] = true
		}
		if !e.IsDir() {
			continue
		}
		sub, _ := os.ReadDir(p)
		for _, s := range sub {
			if fi, err := s.Info(); err == nil {
				uid, _ := FileOwner(fi)
				owners[uid] = true
			}
		}
	}
	return func(uid uint32) bool {
		if uid == 0 || owners[uid] {
			return true
		}
		_, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
		return err == nil
	}
}

// RemoveUser unregisters id and removes its credentials folder
// (ROOT/credentials/<id>, the user's git token): a user added later, with
// the same ID or the same uid, never finds it. Its repository stays where
// it is until MoveAside: a daemon serving it first commits what is pending
// (Host.Reload does both), and without a daemon mindmount users remove
// moves it at once.
func RemoveUser(root, id string) error {
	if err := ValidID(id); err != nil {
		return err
	}
	err := editRegistry(root, func(reg *registry) error {
		for i, u := range reg.Users {
			if u.ID == id {
				reg.Users = append(reg.Users[:i], reg.Users[i+1:]...)
				return nil
			}
		}
		return fmt.Errorf("%w %q", ErrUnknownUser, id)
	})
	if err != nil {
		return err
	}
	// RemoveAll removes links, never what they point to.
	if err := os.RemoveAll(remote.CredentialsDir(root, id)); err != nil {
		return fmt.Errorf("user %s removed, but not its credentials: %w", id, err)
	}
	return nil
}

// MoveAside moves the repository of a removed user to
// ROOT/removed/<id>-<time>; it never deletes it. It returns where the
// repository went ("" when there was none).
func MoveAside(root, id string) (string, error) {
	if err := ValidID(id); err != nil {
		return "", err
	}
	dir := UserDir(root, id)
	if _, err := os.Lstat(dir); err != nil {
		return "", nil
	}
	if err := os.MkdirAll(filepath.Join(root, RemovedDir), 0o700); err != nil {
		return "", err
	}
	dest := filepath.Join(root, RemovedDir, id+"-"+time.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := os.Rename(dir, dest); err != nil {
		return "", fmt.Errorf("move the repository aside: %w", err)
	}
	return dest, nil
}

// handOver gives a new user's repository to uid:gid through the one
// hand-over (GiveTo: never following a link, skipping a file with a second
// hard link, leaving other users' entries alone): what root or the
// repository's current owner made becomes the user's. A repository that
// already has those ids is left as it is; one that another uid owns needs
// root.
func handOver(dir string, uid, gid uint32) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return err
	}
	if st.Uid == uid && st.Gid == gid {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("%s is owned by %d:%d, not %d:%d: chown it (as root) or add the user as root", dir, st.Uid, st.Gid, uid, gid)
	}
	return GiveTo(dir, uid, gid, st.Uid)
}
