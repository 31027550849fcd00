package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/memgraph"
)

// Config tunes a Host.
type Config struct {
	// Root is the serve ROOT: ROOT/users.json and ROOT/users/<id>/.
	Root string
	// Runtime is the configuration every user's Runtime starts from.
	Runtime RuntimeConfig
	// ProviderFor returns the model of user id (a fair pool's share); nil
	// gives every user Runtime.Provider.
	ProviderFor func(id string) llm.Provider
	// UnloadAfter is how long a user stays loaded without use (default
	// 10 minutes).
	UnloadAfter time.Duration
	// Logger receives the host's logs; nil means slog.Default().
	Logger *slog.Logger
	// Mount is where the daemon mounts the users ("" for none), recorded
	// in the ROOT lock for mindmount status --root.
	Mount string
}

// User is what the host knows of one user.
type User struct {
	Entry
	Dir      string
	Loaded   bool
	LastUsed time.Time // zero until first use
	// Err says why the repository cannot be served (missing, not a mindmount
	// repository, broken); nil when it loaded or was not tried yet.
	Err error
}

// Event tells subscribers that a user changed state.
type Event struct {
	ID   string
	Kind EventKind
}

// EventKind is what happened to a user.
type EventKind int

const (
	Loaded   EventKind = iota // a Runtime started
	Unloaded                  // its Runtime closed (idle, removed, shutdown)
	Added                     // the registry gained the user
	Removed                   // the registry lost the user
)

// failRetry is how long a failed load is remembered before a new access
// tries again: a broken repository must not be re-scanned on every lookup.
const failRetry = 2 * time.Second

// Host is every user under a serve ROOT. Safe for concurrent use.
type Host struct {
	cfg Config
	// fromDisk marks StatusOf's host: no daemon, users read from disk.
	fromDisk bool
	// lastOf reads an unloaded user's last commit (StatusOf's reader).
	lastOf LastCommitReader
	log    *slog.Logger
	lock   *os.File // the ROOT lock, held for the host's life

	ctx    context.Context // parent of every Runtime
	cancel context.CancelFunc

	mu       sync.Mutex
	users    map[string]*slot
	reg      registryView
	operator *memgraph.OperatorSource // ROOT/config, for every user's tracker
	subs     []func(Event)
	closed   bool
}

// slot is one user's table entry: static facts and, while loaded, the
// Runtime. An unloaded user costs only this.
type slot struct {
	entry Entry

	mu       sync.Mutex // serialises load and unload
	rt       *Runtime
	refs     int
	lastUsed time.Time
	err      error
	failedAt time.Time
}

// ErrRootBusy means another daemon serves the ROOT.
var ErrRootBusy = errors.New("another mindmount serve is running on this root")

// New opens ROOT for serving: it takes the ROOT lock (a second daemon on
// the same ROOT is refused) and reads the registry. Nothing is loaded yet.
func New(cfg Config) (*Host, error) {
	if cfg.UnloadAfter <= 0 {
		cfg.UnloadAfter = 10 * time.Minute
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	root, lf, err := openServeRoot(cfg.Root, cfg.Mount)
	if err != nil {
		return nil, err
	}
	cfg.Root = root
	ctx, cancel := context.WithCancel(context.Background())
	h := &Host{cfg: cfg, log: log, lock: lf, ctx: ctx, cancel: cancel, users: map[string]*slot{},
		operator: &memgraph.OperatorSource{Path: filepath.Join(cfg.Root, OperatorConfigFile), Strict: true}}
	h.reg.root, h.reg.reload, h.reg.log = cfg.Root, h.Reload, log
	if err := h.Reload(); err != nil {
		cancel()
		lf.Close()
		return nil, err
	}
	return h, nil
}

// openServeRoot checks that root is a folder and takes its lock for a
// daemon mounting at mount (Host and Workers alike); root comes back
// absolute.
func openServeRoot(root, mount string) (string, *os.File, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return "", nil, fmt.Errorf("root: %w", err)
	}
	if !fi.IsDir() {
		return "", nil, fmt.Errorf("root %s is not a directory", root)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", nil, err
	}
	lf, err := lockRoot(abs, mount)
	if err != nil {
		return "", nil, err
	}
	return abs, lf, nil
}

// lockRoot takes ROOT/.serve.lock (flock, released by the kernel when the
// process dies) and writes our pid into it for the error of the next one.
func lockRoot(root, mount string) (*os.File, error) {
	name := filepath.Join(root, serveLock)
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("root lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid, _ := os.ReadFile(name)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			p, _ := parseLock(pid)
			return nil, fmt.Errorf("%w (%s, pid %s): stop it first", ErrRootBusy, root, p)
		}
		return nil, fmt.Errorf("root lock: %w", err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(fmt.Sprintf("%d\n%s\n", os.Getpid(), mount)), 0)
	return f, nil
}

// parseLock reads the pid and mountpoint a daemon wrote into the ROOT lock.
func parseLock(b []byte) (pid, mount string) {
	pid, mount, _ = strings.Cut(string(b), "\n")
	mount, _, _ = strings.Cut(mount, "\n")
	if pid == "" || len(pid) > 10 {
		pid = "unknown"
	}
	return pid, mount
}

// Running reports whether a daemon serves root, with its pid and mountpoint.
func Running(root string) (running bool, pid, mount string) {
	name := filepath.Join(root, serveLock)
	f, err := os.Open(name)
	if err != nil {
		return false, "", ""
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false, "", ""
	}
	b, _ := os.ReadFile(name)
	pid, mount = parseLock(b)
	return true, pid, mount
}

// Root is the serve ROOT, absolute.
func (h *Host) Root() string { return h.cfg.Root }

// Subscribe calls fn (from the goroutine that made the change; it must not
// block) whenever a user is loaded, unloaded, added or removed.
func (h *Host) Subscribe(fn func(Event)) {
	h.mu.Lock()
	h.subs = append(h.subs, fn)
	h.mu.Unlock()
}

func (h *Host) emit(ev Event) {
	h.mu.Lock()
	subs := append([]func(Event){}, h.subs...)
	h.mu.Unlock()
	for _, fn := range subs {
		fn(ev)
	}
}

// Reload re-reads the registry: added users appear, removed users are
// unloaded (committing what is pending) and disappear.
func (h *Host) Reload() error {
	entries, err := ReadRegistry(h.cfg.Root)
	if err != nil {
		return err
	}
	stamp := registryStamp(h.cfg.Root)
	want := map[string]Entry{}
	for _, e := range entries {
		want[e.ID] = e
	}
	var added, removed []*slot
	h.mu.Lock()
	h.reg.read(stamp)
	for id, s := range h.users {
		if _, ok := want[id]; !ok {
			delete(h.users, id)
			removed = append(removed, s)
		}
	}
	for id, e := range want {
		if s, ok := h.users[id]; ok {
			s.mu.Lock()
			s.entry = e // uid, gid or name may have changed
			s.mu.Unlock()
			continue
		}
		s := &slot{entry: e}
		h.users[id] = s
		added = append(added, s)
	}
	h.mu.Unlock()
	for _, s := range removed {
		// Commit what is pending first, then move the repository aside.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		h.unload(ctx, s, true)
		cancel()
		dest, err := MoveAside(h.cfg.Root, s.entry.ID)
		if err != nil {
			h.log.Warn("removed user's repository stays in place", "user", s.entry.ID, "err", err)
		}
		h.log.Info("user removed", "user", s.entry.ID, "moved_to", dest)
		h.emit(Event{ID: s.entry.ID, Kind: Removed})
	}
	for _, s := range added {
		h.emit(Event{ID: s.entry.ID, Kind: Added})
	}
	return nil
}

// reloadIfChanged re-reads the registry when it changed on disk since it
// was last read: an added user is served at its first lookup, without a
// SIGHUP.
func (h *Host) reloadIfChanged() { h.reg.reloadIfChanged() }

func (h *Host) slot(id string) (*slot, error) {
	if err := ValidID(id); err != nil {
		return nil, err
	}
	for try := 0; try < 2; try++ {
		h.mu.Lock()
		s := h.users[id]
		closed := h.closed
		h.mu.Unlock()
		if closed {
			return nil, errors.New("mindmount serve is shutting down")
		}
		if s != nil {
			return s, nil
		}
		if try == 0 {
			h.reloadIfChanged()
		}
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownUser, id)
}

// Lookup returns what the host knows of user id, without loading it.
func (h *Host) Lookup(id string) (User, error) {
	s, err := h.slot(id)
	if err != nil {
		return User{}, err
	}
	return h.userOf(s), nil
}

func (h *Host) userOf(s *slot) User {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := User{Entry: s.entry, Dir: UserDir(h.cfg.Root, s.entry.ID), Loaded: s.rt != nil, LastUsed: s.lastUsed, Err: s.err}
	return u
}

// Users lists every registered user, sorted by ID.
func (h *Host) Users() []User {
	h.reloadIfChanged()
	h.mu.Lock()
	slots := make([]*slot, 0, len(h.users))
	for _, s := range h.users {
		slots = append(slots, s)
	}
	h.mu.Unlock()
	out := make([]User, 0, len(slots))
	for _, s := range slots {
		out = append(out, h.userOf(s))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Acquire returns the Runtime of user id, loading it first when it is not
// loaded: open the repository, commit what a crash left, start its tracker,
// consolidator and services. The Runtime stays loaded at least until
// release is called (release is safe to call more than once). Errors:
// ErrBadID, ErrUnknownUser, or why the repository cannot be served.
func (h *Host) Acquire(ctx context.Context, id string) (*Runtime, func(), error) {
	s, err := h.slot(id)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	loaded := false
	if s.rt == nil {
		if s.err != nil && time.Since(s.failedAt) < failRetry {
			err := s.err
			s.mu.Unlock()
			return nil, nil, err
		}
		rt, err := h.load(ctx, s.entry)
		for try := 0; err != nil && isOutOfFiles(err) && try < 3; try++ {
			// The kernel's per-uid limits (inotify instances, descriptors)
			// bound how many users can be loaded at once: make room by
			// unloading the user idle the longest, then try again.
			if !h.unloadOldestIdle(ctx, s) {
				break
			}
			rt, err = h.load(ctx, s.entry)
		}
		if err != nil {
			s.err, s.failedAt = err, time.Now()
			s.mu.Unlock()
			h.log.Warn("user cannot be served", "user", id, "err", err)
			return nil, nil, err
		}
		s.rt, s.err, loaded = rt, nil, true
	}
	s.refs++
	s.lastUsed = time.Now()
	rt := s.rt
	s.mu.Unlock()
	if loaded {
		h.emit(Event{ID: id, Kind: Loaded})
	}
	var once sync.Once
	return rt, func() {
		once.Do(func() {
			s.mu.Lock()
			s.refs--
			s.lastUsed = time.Now()
			s.mu.Unlock()
		})
	}, nil
}

// load opens and starts the Runtime of e.
func (h *Host) load(ctx context.Context, e Entry) (*Runtime, error) {
	cfg := h.cfg.Runtime
	cfg.Logger = h.log.With("user", e.ID)
	cfg.User = e.ID // its commits name the user (the mount adds the sandbox)
	cfg.Root = h.cfg.Root
	// The operator's switches come from ROOT/config, never from a file
	// the user (or the user's agent) can write.
	cfg.Operator = h.operator
	if h.cfg.ProviderFor != nil {
		cfg.Provider = h.cfg.ProviderFor(e.ID)
	}
	dir := UserDir(h.cfg.Root, e.ID)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("repository %s is missing", dir)
	}
	rt, err := OpenRuntime(dir, cfg)
	if err != nil {
		return nil, err
	}
	if err := rt.Start(h.ctx); err != nil {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rt.Close(cctx)
		cancel()
		return nil, fmt.Errorf("start: %w", err)
	}
	h.log.Info("user loaded", "user", e.ID)
	return rt, nil
}

// unload closes the Runtime of s (committing what is pending) when it is
// loaded and, unless force, unused.
func (h *Host) unload(ctx context.Context, s *slot, force bool) (bool, error) {
	s.mu.Lock()
	if s.rt == nil || (!force && s.refs > 0) {
		s.mu.Unlock()
		return false, nil
	}
	err := s.rt.Close(ctx)
	s.rt = nil
	id := s.entry.ID
	s.mu.Unlock()
	if err != nil {
		h.log.Warn("unload: commit pending changes", "user", id, "err", err)
	} else {
		h.log.Info("user unloaded; pending changes committed", "user", id)
	}
	h.emit(Event{ID: id, Kind: Unloaded})
	return true, err
}

// isOutOfFiles reports whether err is the kernel refusing another
// descriptor or inotify instance.
func isOutOfFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// unloadOldestIdle unloads the loaded, unused user (other than except)
// that was used the longest ago; false when there is none.
func (h *Host) unloadOldestIdle(ctx context.Context, except *slot) bool {
	h.mu.Lock()
	slots := make([]*slot, 0, len(h.users))
	for _, s := range h.users {
		slots = append(slots, s)
	}
	h.mu.Unlock()
	var oldest *slot
	var at time.Time
	for _, s := range slots {
		// TryLock: a slot busy loading or unloading is no candidate, and
		// waiting for it could deadlock with its own search for room.
		if s == except || !s.mu.TryLock() {
			continue
		}
		if s.rt != nil && s.refs == 0 && (oldest == nil || s.lastUsed.Before(at)) {
			oldest, at = s, s.lastUsed
		}
		s.mu.Unlock()
	}
	if oldest == nil {
		return false
	}
	h.log.Info("unloading the longest idle user to make room", "user", oldest.entry.ID)
	unloaded, _ := h.unload(ctx, oldest, false)
	return unloaded
}

// Unload unloads user id now if it is loaded and unused, committing what is
// pending first.
func (h *Host) Unload(ctx context.Context, id string) error {
	s, err := h.slot(id)
	if err != nil {
		return err
	}
	_, err = h.unload(ctx, s, false)
	return err
}

// Run unloads users idle for Config.UnloadAfter until ctx ends. One
// goroutine for the whole host: an idle user costs none.
func (h *Host) Run(ctx context.Context) {
	idleSweeps(ctx, h.cfg.UnloadAfter, &h.reg, h.unloadIdle)
}

// unloadIdle unloads the users idle for UnloadAfter.
func (h *Host) unloadIdle(ctx context.Context) {
	h.mu.Lock()
	slots := make([]*slot, 0, len(h.users))
	for _, s := range h.users {
		slots = append(slots, s)
	}
	h.mu.Unlock()
	for _, s := range slots {
		s.mu.Lock()
		idle := s.rt != nil && s.refs == 0 && time.Since(s.lastUsed) >= h.cfg.UnloadAfter
		s.mu.Unlock()
		if idle {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			h.unload(cctx, s, false)
			cancel()
		}
	}
}

// Close unloads every user, committing what is pending, and releases the
// ROOT lock. It returns the first commit error.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	slots := make([]*slot, 0, len(h.users))
	for _, s := range h.users {
		slots = append(slots, s)
	}
	h.mu.Unlock()
	var first error
	for _, s := range slots {
		if _, err := h.unload(ctx, s, true); err != nil && first == nil {
			first = fmt.Errorf("user %s: %w", s.entry.ID, err)
		}
	}
	h.cancel()
	h.lock.Close()
	return first
}

// ErrServed means a repository belongs to a ROOT that mindmount serve is
// serving: a second daemon on it would make two writers of one repository.
var ErrServed = errors.New("is served by mindmount serve")

// CheckNotServed refuses dir when it is a user's repository of a ROOT a
// running daemon serves, loaded or not (serve holds every registered
// user's repository from its start). Single-repository daemons (mount,
// watch, mcp) call it before they start.
func CheckNotServed(dir string) error {
	root, id, ok := userDirOf(dir)
	if !ok {
		return nil
	}
	if running, pid, mnt := Running(root); running {
		where := ""
		if mnt != "" {
			where = "; use " + filepath.Join(mnt, id) + " instead"
		}
		return fmt.Errorf("%s %w (pid %s, root %s)%s", dir, ErrServed, pid, root, where)
	}
	return nil
}
