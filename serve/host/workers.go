package host

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/fs/mount"
	"github.com/mindmount/mindmount/serve/remote"
)

// WorkersConfig tunes Workers.
type WorkersConfig struct {
	// Root is the serve ROOT: ROOT/users.json and ROOT/users/<id>/.
	Root string
	// Mount is where each user's memory is mounted, at Mount/<id> ("" for
	// none). Mounting needs root.
	Mount string
	// MountOnDemand mounts a user only while its worker runs for a
	// Forward (a cluster node holding the user), never at start nor again
	// after the worker ends: another node may be the user's writer.
	MountOnDemand bool
	// Exe is the mindmount binary the workers run ("mindmount worker").
	Exe string
	// Args are the worker flags every worker gets (the daemon's timing).
	Args []string
	// Pool is the daemon's one bounded queue of model calls, shared by
	// every user's consolidation (each worker reaches its share over its
	// control socket) and the HTTP chat; nil: no model.
	Pool *llm.Pool
	// Memory bounds each worker's address space in bytes (0: no bound).
	Memory uint64
	// Cgroups, when set, confines each worker (and the programs it runs)
	// to a control group of its own where the host allows it.
	Cgroups *Cgroups
	// UnloadAfter stops a worker without a mount idle this long (default
	// 10 minutes). A mounted user's worker serves its mount for the
	// mount's life: a FUSE connection is answered by one process.
	UnloadAfter time.Duration
	// Ready, when set, tells the mount's readiness for tests (nil: none).
	Logger *slog.Logger
}

// Workers runs every user of a serve ROOT in a worker process of its own,
// with the user's uid and gid: privilege separation as Dovecot, Postfix and
// OpenSSH do it. The daemon (root) keeps only what needs root — the mount
// syscall, the listening sockets, the registry and tokens, the model's key
// and its fair pool — and never touches a path inside a user's tree
// beyond giving root's leftovers back to the user (GiveToUser). Safe for
// concurrent use.
type Workers struct {
	cfg  WorkersConfig
	log  *slog.Logger
	lock *os.File

	mu     sync.Mutex
	users  map[string]*worker
	reg    registryView
	closed bool
	quit   chan struct{}   // closed by Close: every wait for a worker ends
	life   context.Context // ends with quit
	end    context.CancelFunc
	wg     sync.WaitGroup // the watchers, restarts and background re-reads
	heldMu sync.Mutex     // serialises writes of HeldFile
	noCgrp sync.Once      // says once that workers are not in cgroups

	spares spares
	teamw  teamWriters // the teams' writers (syncTeams)
}

// worker is one user's process and what the daemon holds for it.
//
// Two locks: op serialises the slow work of starting and stopping this
// user's worker (a mount, a wait for the process) and is taken only by
// that work; mu guards the fields and is never held across anything that
// can block, so /health, the status and every other user never wait for
// one user's worker or mount.
type worker struct {
	entry  Entry
	oldIDs []uint32 // the user's earlier uids (a uid change): their files become the new uid's
	teams  string   // teamPrint when the worker was made: its teams, roles and groups

	op chan struct{} // a one-slot semaphore: held while starting or stopping

	mu        sync.Mutex
	cmd       *exec.Cmd
	done      chan struct{} // closed when the process exited
	fuse      *os.File      // the mount's /dev/fuse descriptor (nil: no mount)
	conn      int           // the mount's FUSE connection (0: unknown)
	mnt       string
	ctl       *http.Server
	proxy     http.Handler
	tail      *lastWords // what the process printed last on standard error
	refs      int
	lastUsed  time.Time
	startedAt time.Time
	stopping  bool
	regrouped bool      // replaced because its teams changed (reload): its mount is aborted first
	err       error     // why the user cannot be served (nil: fine or not tried)
	retryAt   time.Time // no new start before (a failed start, a restart's backoff)
	deaths    deaths    // how the last processes ended, to stop a crash loop
}

func newWorker(e Entry, oldIDs []uint32) *worker {
	return &worker{entry: e, oldIDs: oldIDs, op: make(chan struct{}, 1)}
}

// Restarts: a worker that ends by itself is started again after a
// backoff that doubles with each death in a row (restartBackoff, up to
// maxBackoff); one that ends the same way holdBackAfter times in a row is
// held back for holdBackFor, saying why (HeldBackError), instead of a
// crash loop. A worker that served for stableAfter starts a new row.
var (
	restartBackoff = 100 * time.Millisecond
	maxBackoff     = 30 * time.Second
	holdBackAfter  = 3
	holdBackFor    = 5 * time.Minute
	stableAfter    = time.Minute
)

// stopGrace is how long a worker has to commit what is pending after
// SIGTERM before it is killed: serve stops within 5 s whatever a worker
// does.
const stopGrace = 3 * time.Second

// deaths counts a worker's deaths in a row.
type deaths struct {
	row  int    // deaths in a row, whatever their kind (the backoff)
	same int    // of those, the last ones that ended the same way
	exit string // how the last one ended ("signal: killed", "exit status 2")
}

// HeldBackError says why a user's worker is not started again for a
// while: it ended the same way Times times in a row.
type HeldBackError struct {
	Times int
	Exit  string    // how it ended ("signal: killed", "could not start")
	Last  string    // the last thing it printed (its log) or the start's error; "" when nothing
	Until time.Time // when it is tried again
}

func (e *HeldBackError) Error() string {
	msg := fmt.Sprintf("held back until %s: the worker ended the same way %d times in a row (%s)", e.Until.Format(time.TimeOnly), e.Times, e.Exit)
	if e.Last != "" {
		msg += "; it said: " + e.Last
	}
	return msg
}

// ErrNeedsRoot means a worker must run as another uid and we are not root.
var ErrNeedsRoot = errors.New("serving another uid needs root")

// NewWorkers takes the ROOT lock, reads the registry and, with a mount,
// mounts every user and starts its worker.
func NewWorkers(cfg WorkersConfig) (*Workers, error) {
	if cfg.UnloadAfter <= 0 {
		cfg.UnloadAfter = 10 * time.Minute
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.Mount != "" {
		m, err := filepath.Abs(cfg.Mount)
		if err != nil {
			return nil, err
		}
		cfg.Mount = m
	}
	root, lf, err := openServeRoot(cfg.Root, cfg.Mount)
	if err != nil {
		return nil, err
	}
	cfg.Root = root
	ws := &Workers{cfg: cfg, log: log, lock: lf, users: map[string]*worker{}, quit: make(chan struct{})}
	ws.life, ws.end = context.WithCancel(context.Background())
	// A lookup or /health that notices a changed registry never waits
	// for the stops and starts it leads to.
	ws.reg.root, ws.reg.reload, ws.reg.log = cfg.Root, func() error { return ws.reload(false) }, log
	if err := ws.reload(true); err != nil {
		lf.Close()
		return nil, err
	}
	return ws, nil
}

// Pool is the daemon's model pool (WorkersConfig.Pool), for the fronts
// that call the model themselves; nil without a model.
func (ws *Workers) Pool() *llm.Pool { return ws.cfg.Pool }

// checkReachable says which folder on the way to ROOT the users' workers
// (running as the users) cannot pass.
func checkReachable(root string) error {
	for d := root; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("the users' workers run as the users and cannot pass %s (mode %v): let them through with chmod o+x %s, or put ROOT elsewhere", d, fi.Mode().Perm(), d)
		}
		if d == "/" || d == "." {
			return nil
		}
	}
}

// Root is the serve ROOT, absolute.
func (ws *Workers) Root() string { return ws.cfg.Root }

// Reload re-reads the registry: a removed user's worker stops (its
// pending changes committed) and its repository is moved aside; an added
// user is mounted; a user whose uid or gid changed gets a new worker and a
// new mount, so the old uid is refused at once and the kernel's caches of
// the old mount go with it. The stops and starts are done when it returns.
func (ws *Workers) Reload() error { return ws.reload(true) }

// spawn runs f in a goroutine Close waits for; false (f not run) once
// Close began.
func (ws *Workers) spawn(f func()) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.closed {
		return false
	}
	ws.wg.Add(1)
	go func() {
		defer ws.wg.Done()
		f()
	}()
	return true
}

// reload is Reload; unless wait, the stops and starts run in the
// background.
func (ws *Workers) reload(wait bool) error {
	// The version first: a change made while we read is read again later.
	stamp := registryStamp(ws.cfg.Root)
	entries, err := ReadRegistry(ws.cfg.Root)
	if err != nil {
		return err
	}
	want := map[string]Entry{}
	for _, e := range entries {
		want[e.ID] = e
	}
	teams := ws.loadTeams()
	ws.syncTeams(teams)
	ws.mu.Lock()
	ws.reg.read(stamp)
	var removed, changed, added []*worker
	for id, w := range ws.users {
		e, ok := want[id]
		switch {
		case !ok:
			delete(ws.users, id)
			removed = append(removed, w)
		case e.UID != w.entry.UID || e.GID != w.entry.GID:
			nw := newWorker(e, append(w.oldIDs, w.entry.UID))
			nw.teams = teamPrint(teams, ws.cfg.Root, id)
			ws.users[id] = nw
			changed = append(changed, w)
			added = append(added, nw)
		case teamPrint(teams, ws.cfg.Root, id) != w.teams:
			// A team joined or left, or a role changed: the worker
			// must gain or lose a group, which only a new process can.
			nw := newWorker(e, w.oldIDs)
			nw.teams = teamPrint(teams, ws.cfg.Root, id)
			ws.users[id] = nw
			w.mu.Lock()
			w.regrouped = true
			w.mu.Unlock()
			changed = append(changed, w)
			added = append(added, nw)
		default:
			w.mu.Lock()
			w.entry = e
			w.mu.Unlock()
		}
	}
	for id, e := range want {
		if _, ok := ws.users[id]; !ok {
			w := newWorker(e, nil)
			w.teams = teamPrint(teams, ws.cfg.Root, id)
			ws.users[id] = w
			added = append(added, w)
		}
	}
	ws.mu.Unlock()
	if wait {
		ws.apply(changed, removed, added)
	} else {
		ws.spawn(func() { ws.apply(changed, removed, added) })
	}
	return nil
}

// apply stops the changed and removed users' workers and starts the
// added ones (Reload).
func (ws *Workers) apply(changed, removed, added []*worker) {
	ctx, cancel := context.WithTimeout(ws.life, time.Minute)
	defer cancel()
	for _, w := range changed {
		w.mu.Lock()
		regrouped := w.regrouped
		// Stopping before the abort: the worker ends by itself when
		// its mount does, and must not be started again (watch).
		w.stopping = w.stopping || regrouped
		w.mu.Unlock()
		if regrouped {
			// The old mount's connection ends first: every descriptor
			// open on it, shared/<team>/ included, fails at once, not
			// after the worker's last commit.
			ws.log.Info("teams changed: the user's worker and mount start again", "user", w.entry.ID)
			ws.abort(w)
		} else {
			ws.log.Info("uid or gid changed: the user's worker and mount start again", "user", w.entry.ID)
		}
		ws.stop(ctx, w)
	}
	for _, w := range removed {
		ws.stop(ctx, w)
		dest, err := MoveAside(ws.cfg.Root, w.entry.ID)
		if err != nil {
			ws.log.Warn("removed user's repository stays in place", "user", w.entry.ID, "err", err)
		}
		ws.log.Info("user removed", "user", w.entry.ID, "moved_to", dest)
	}
	if ws.cfg.Mount != "" && !ws.cfg.MountOnDemand {
		for _, w := range added {
			// Each start gets its own time: the registry may name
			// hundreds of users, started one after the other.
			sctx, scancel := context.WithTimeout(ws.life, 2*time.Minute)
			if _, err := ws.ensure(sctx, w); err != nil {
				ws.log.Warn("user cannot be served", "user", w.entry.ID, "err", err)
			} else {
				w.mu.Lock()
				w.refs-- // ensure counted a use; nobody is using it yet
				w.mu.Unlock()
			}
			scancel()
		}
	}
}

// Users lists every registered user, sorted; Loaded is a running worker.
func (ws *Workers) Users() []User {
	ws.reloadIfChanged()
	ws.mu.Lock()
	ls := make([]*worker, 0, len(ws.users))
	for _, w := range ws.users {
		ls = append(ls, w)
	}
	ws.mu.Unlock()
	out := make([]User, 0, len(ls))
	for _, w := range ls {
		w.mu.Lock()
		out = append(out, User{Entry: w.entry, Dir: UserDir(ws.cfg.Root, w.entry.ID), Loaded: w.running(), LastUsed: w.lastUsed, Err: w.err})
		w.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Lookup returns what the daemon knows of user id, without starting it.
func (ws *Workers) Lookup(id string) (User, error) {
	if err := ValidID(id); err != nil {
		return User{}, err
	}
	w, err := ws.lookup(id)
	if err != nil {
		return User{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return User{Entry: w.entry, Dir: UserDir(ws.cfg.Root, w.entry.ID), Loaded: w.running(), LastUsed: w.lastUsed, Err: w.err}, nil
}

func (ws *Workers) reloadIfChanged() { ws.reg.reloadIfChanged() }

// running reports whether the process is alive; w.mu held.
func (w *worker) running() bool {
	if w.done == nil {
		return false
	}
	select {
	case <-w.done:
		return false
	default:
		return true
	}
}

// Forward returns the handler that forwards HTTP and MCP requests to user
// id's worker, starting it when needed; release marks the request done.
// Errors: ErrBadID, ErrUnknownUser, or why the user cannot be served.
func (ws *Workers) Forward(ctx context.Context, id string) (http.Handler, func(), error) {
	if err := ValidID(id); err != nil {
		return nil, nil, err
	}
	w, err := ws.lookup(id)
	if err != nil {
		return nil, nil, err
	}
	h, err := ws.ensure(ctx, w)
	if err != nil {
		return nil, nil, err
	}
	var once sync.Once
	return h, func() {
		once.Do(func() {
			w.mu.Lock()
			w.refs--
			w.lastUsed = time.Now()
			w.mu.Unlock()
		})
	}, nil
}

func (ws *Workers) lookup(id string) (*worker, error) {
	for try := 0; try < 2; try++ {
		ws.mu.Lock()
		w, closed := ws.users[id], ws.closed
		ws.mu.Unlock()
		if closed {
			return nil, errShuttingDown
		}
		if w != nil {
			return w, nil
		}
		if try == 0 {
			ws.reloadIfChanged()
		}
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownUser, id)
}

// ensure starts w's worker (and mount) unless it runs, and counts one use
// of it; the caller of Forward releases it. Waiting for another start of
// the same user ends with ctx.
func (ws *Workers) ensure(ctx context.Context, w *worker) (http.Handler, error) {
	if h, ok := w.use(); ok {
		return h, nil
	}
	select {
	case w.op <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-ws.quit:
		return nil, errShuttingDown
	}
	defer func() { <-w.op }()
	if h, ok := w.use(); ok {
		return h, nil
	}
	w.mu.Lock()
	err, retryAt := w.err, w.retryAt
	w.mu.Unlock()
	if err != nil && time.Now().Before(retryAt) {
		return nil, err
	}
	if ws.isClosed() {
		return nil, errShuttingDown
	}
	if err := ws.start(ctx, w); err != nil {
		w.mu.Lock()
		w.err, w.retryAt = err, time.Now().Add(failRetry)
		w.mu.Unlock()
		if ws.cfg.Mount != "" && !ws.cfg.MountOnDemand && !errors.Is(err, errShuttingDown) {
			// A mounted user is always served: try again later, as
			// after a death (and hold it back if it fails the same
			// way again and again).
			ws.died(w, "could not start", err.Error(), 0)
		}
		return nil, err
	}
	h, _ := w.use()
	return h, nil
}

var errShuttingDown = errors.New("mindmount serve is shutting down")

func (ws *Workers) isClosed() bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.closed
}

// use counts one use of w's running worker; ok is false when none runs.
func (w *worker) use() (http.Handler, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running() {
		return nil, false
	}
	w.refs++
	w.lastUsed = time.Now()
	return w.proxy, true
}

// start prepares the user's files, mounts, opens the sockets and starts
// the worker process; w.op held, w.mu not: nothing here holds a lock
// another user or /health needs.
func (ws *Workers) start(ctx context.Context, w *worker) error {
	w.mu.Lock()
	e := w.entry
	w.mu.Unlock()
	ws.release(w) // what a dead process left, if its watcher has not yet
	dir, err := ws.prepareRepo(w, e)
	if err != nil {
		return err
	}
	var files []*os.File
	args := []string{"--repo", dir, "--user", e.ID, "--uid", strconv.Itoa(int(e.UID)), "--gid", strconv.Itoa(int(e.GID)), "--from-uid", strconv.Itoa(os.Geteuid())}
	if ws.cfg.Memory > 0 {
		args = append(args, "--memory", strconv.FormatUint(ws.cfg.Memory, 10))
	}
	var fuseFile *os.File
	var conn int
	var mnt string
	var ctl *http.Server
	fail := func(err error) error {
		if ctl != nil {
			ctl.Close()
		}
		if fuseFile != nil {
			abortMount(fuseFile, conn, mnt)
		}
		return err
	}
	if ws.cfg.Mount != "" {
		if fuseFile, conn, mnt, err = ws.mountFor(e, dir); err != nil {
			return err
		}
		files = append(files, fuseFile)
	}
	httpName, hf, err := listenWorkerHTTP()
	if err != nil {
		return fail(err)
	}
	defer hf.Close()
	files = append(files, hf)
	if ws.cfg.Pool != nil {
		var name string
		if ctl, name, err = ws.serveModel(e); err != nil {
			return fail(err)
		}
		args = append(args, "--ctl", name)
	}
	args = append(args, ws.cfg.Args...)
	// A spare worker, past exec and initialisation, becomes the user's: it
	// drops to their uid and gid before it reads the repository (spare.go);
	// the next spare starts once this one serves, not beside its first read.
	began := time.Now()
	defer ws.refill()
	sp, err := ws.takeSpare(e.ID)
	if err != nil {
		return fail(err)
	}
	if err := sp.assign(Assignment{Args: args, Fuse: fuseFile != nil}, files); err != nil {
		sp.kill()
		return fail(err)
	}
	cmd, done := sp.cmd, sp.done
	cpu, err := ws.waitReady(ctx, sp.out) // the worker's CPU from its user to serving
	if err != nil {
		return fail(sp.failed(err))
	}
	w.mu.Lock()
	var wasHeld *HeldBackError
	errors.As(w.err, &wasHeld)
	w.cmd, w.done, w.tail = cmd, done, sp.tail
	w.fuse, w.conn, w.mnt, w.ctl = fuseFile, conn, mnt, ctl
	w.proxy = workerProxy(httpName, ws.log.With("user", e.ID))
	w.startedAt, w.stopping, w.err = time.Now(), false, nil
	w.mu.Unlock()
	ws.spawn(func() { ws.watch(w, done) })
	if wasHeld != nil {
		ws.saveHeld()
	}
	ws.log.Info("user's worker started", "user", e.ID, "uid", e.UID, "pid", cmd.Process.Pid, "ready_ms", time.Since(began).Milliseconds(), "cpu_ms", float64(cpu.Microseconds())/1000)
	return nil
}

// listenWorkerHTTP opens the abstract socket a worker serves HTTP on: its
// name (the front's proxy dials it) and the descriptor the worker gets.
func listenWorkerHTTP() (string, *os.File, error) {
	name := "mindmount-" + randomName()
	ln, err := listenAbstract(name)
	if err != nil {
		return "", nil, err
	}
	f, err := ln.(*net.UnixListener).File()
	ln.Close() // the worker has its own descriptor of it
	return name, f, err
}

// serveModel serves user e's worker the model pool over an abstract
// socket only e's uid may use: the server and the socket's name.
func (ws *Workers) serveModel(e Entry) (*http.Server, string, error) {
	name := "mindmount-ctl-" + randomName()
	ln, err := listenAbstract(name)
	if err != nil {
		return nil, "", err
	}
	ctl := &http.Server{Handler: llm.ServeRemote(ws.cfg.Pool.For(e.ID)), ReadHeaderTimeout: 10 * time.Second}
	go ctl.Serve(&peerListener{Listener: ln, uid: e.UID})
	return ctl, name, nil
}

// prepareRepo checks that user e's repository may be served by a worker
// of theirs and, as root, makes it theirs (0700, handed over) with its
// credentials folder.
func (ws *Workers) prepareRepo(w *worker, e Entry) (string, error) {
	dir := UserDir(ws.cfg.Root, e.ID)
	if !IsMindmountRepo(dir) {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("repository %s is missing", dir)
		}
		return "", NotMindmountError(dir)
	}
	asRoot := os.Geteuid() == 0
	if !asRoot && (e.UID != uint32(os.Getuid()) || e.GID != uint32(os.Getgid())) {
		return "", fmt.Errorf("user %s (uid %d): %w", e.ID, e.UID, ErrNeedsRoot)
	}
	if asRoot && e.UID == 0 {
		return "", fmt.Errorf("user %s: %w", e.ID, ErrRootWorker)
	}
	if asRoot {
		if err := checkReachable(ws.cfg.Root); err != nil {
			return "", err
		}
		// The repository is the user's, private: the top of its mount is
		// 0700, so the kernel itself refuses other users.
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", err
		}
		if err := GiveTo(dir, e.UID, e.GID, w.oldIDs...); err != nil {
			ws.log.Warn("some files in the repository stay root's", "user", e.ID, "err", err)
		}
		if err := ws.credentialsDir(w); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// mountFor mounts user e's folder under serve's mount (a stale mount
// left by a dead worker cleared first): the FUSE descriptor the worker
// serves, its connection and the mount point.
func (ws *Workers) mountFor(e Entry, dir string) (*os.File, int, string, error) {
	mnt := filepath.Join(ws.cfg.Mount, e.ID)
	// A mount a dead worker left would hang the first look at the
	// path: abort and detach it before anything touches mnt.
	if err := mount.ClearStale(mnt); err != nil {
		ws.log.Warn("a stale mount stays", "mountpoint", mnt, "err", err)
	}
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return nil, 0, "", err
	}
	f, err := mount.MountFd(dir, mnt, e.UID, e.GID)
	if err != nil {
		return nil, 0, "", err
	}
	conn, _ := mount.ConnOf(mnt)
	return f, conn, mnt, nil
}

// waitReady waits for a worker's readiness line on out (and drains what
// it prints after), at most 2 minutes; it returns the CPU the worker
// reported spending from its user to serving.
func (ws *Workers) waitReady(ctx context.Context, out io.Reader) (time.Duration, error) {
	ready := make(chan error, 1)
	var cpu time.Duration
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), WorkerReady); ok {
				if us, err := strconv.ParseInt(strings.TrimPrefix(rest, " cpu_us="), 10, 64); err == nil {
					cpu = time.Duration(us) * time.Microsecond
				}
				ready <- nil
				for sc.Scan() { // keep draining what it prints
				}
				return
			}
		}
		ready <- errors.New("the worker exited before it was ready (its log is above)")
	}()
	select {
	case err := <-ready:
		return cpu, err
	case <-time.After(2 * time.Minute):
		return 0, errors.New("the worker was not ready after 2 minutes")
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-ws.quit:
		return 0, errShuttingDown
	}
}

// confine moves a worker into its user's cgroup where the host allows it,
// so that nothing it runs escapes the bounds; where it cannot, the log
// says so once and the rlimits remain.
func (ws *Workers) confine(id string, pid int) {
	c := ws.cfg.Cgroups
	if c == nil {
		return
	}
	if err := c.Confine(id, pid); err != nil {
		ws.noCgrp.Do(func() { ws.log.Warn("workers run without a cgroup; their rlimits bound them", "err", err) })
	}
}

// ErrRootWorker refuses to serve a user registered with uid 0: a worker
// never holds root's rights.
var ErrRootWorker = errors.New("registered with uid 0: a user's worker never runs as root; give the user a uid of its own (mindmount users remove, then users add --uid N)")

// watch waits for the worker process done to end. Unless it was stopped,
// it aborts the user's FUSE connection at once (every process waiting on
// the mount gets an error instead of hanging), frees the mount and the
// sockets, and has the worker started again (died).
func (ws *Workers) watch(w *worker, done chan struct{}) {
	select {
	case <-done:
	case <-ws.quit:
		return // Close stops it
	}
	w.mu.Lock()
	if w.done != done || w.stopping {
		w.mu.Unlock()
		return
	}
	exit := "exited"
	if w.cmd != nil && w.cmd.ProcessState != nil {
		exit = w.cmd.ProcessState.String()
	}
	last, ran := w.tail.String(), time.Since(w.startedAt)
	w.mu.Unlock()
	ws.release(w)
	ws.died(w, exit, last, ran)
}

// died records that w's worker ended (or failed to start) the way how
// after running for ran, and sets when it may start again: after a
// backoff, or after holdBackFor when it ended the same way holdBackAfter
// times in a row. A mounted user's worker is then started again by
// itself; another user's at its next request.
func (ws *Workers) died(w *worker, how, last string, ran time.Duration) {
	w.mu.Lock()
	if ran >= stableAfter {
		w.deaths = deaths{}
	}
	d := &w.deaths
	d.row++
	if how == d.exit {
		d.same++
	} else {
		d.exit, d.same = how, 1
	}
	var wait time.Duration
	var hb *HeldBackError
	if d.same >= holdBackAfter {
		wait = holdBackFor
		hb = &HeldBackError{Times: d.same, Exit: how, Last: last, Until: time.Now().Add(wait)}
		w.err = hb
		*d = deaths{}
	} else {
		wait = min(restartBackoff<<min(d.row-1, 16), maxBackoff)
		if ran > 0 {
			w.err = fmt.Errorf("the worker ended (%s); starting again", how)
		}
	}
	w.retryAt = time.Now().Add(wait)
	id := w.entry.ID
	w.mu.Unlock()
	switch {
	case hb != nil:
		ws.saveHeld()
		ws.log.Error("user's worker keeps ending the same way; not started again for a while", "user", id, "exit", how, "times", hb.Times, "until", hb.Until.Format(time.TimeOnly), "last", last)
	case ran > 0:
		ws.log.Warn("user's worker exited by itself; starting it again", "user", id, "exit", how, "in", wait)
	}
	if ws.cfg.Mount == "" || ws.cfg.MountOnDemand {
		return // started again by the user's next request
	}
	ws.spawn(func() {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ws.quit:
			return
		}
		ctx, cancel := context.WithTimeout(ws.life, 2*time.Minute)
		defer cancel()
		// A failed start schedules the next try itself (ensure).
		if _, err := ws.ensure(ctx, w); err == nil {
			w.mu.Lock()
			w.refs-- // ensure counted a use; nobody is using it yet
			w.mu.Unlock()
		}
	})
}

// HeldFile, in ROOT, tells who the running daemon holds back and why
// (root's, 0600): mindmount status --root reads it.
const HeldFile = ".serve.held.json"

// saveHeld writes HeldFile: every user whose worker is held back now.
func (ws *Workers) saveHeld() {
	ws.mu.Lock()
	ls := make([]*worker, 0, len(ws.users))
	for _, w := range ws.users {
		ls = append(ls, w)
	}
	ws.mu.Unlock()
	held := map[string]*HeldBackError{}
	for _, w := range ls {
		w.mu.Lock()
		var hb *HeldBackError
		if errors.As(w.err, &hb) && time.Now().Before(hb.Until) {
			held[w.entry.ID] = hb
		}
		w.mu.Unlock()
	}
	b, err := json.Marshal(held)
	if err != nil {
		return
	}
	ws.heldMu.Lock()
	defer ws.heldMu.Unlock()
	p := filepath.Join(ws.cfg.Root, HeldFile)
	if err := os.WriteFile(p+".tmp", b, 0o600); err == nil {
		os.Rename(p+".tmp", p)
	}
}

// readHeld reads HeldFile: who the daemon serving root holds back, while
// one runs.
func readHeld(root string) map[string]*HeldBackError {
	if running, _, _ := Running(root); !running {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(root, HeldFile))
	if err != nil {
		return nil
	}
	var held map[string]*HeldBackError
	if json.Unmarshal(b, &held) != nil {
		return nil
	}
	return held
}

// lastWords keeps the line a process printed last on standard error (or
// the first fatal one: a Go runtime's "fatal error: ..." comes before
// its stack) while passing everything on to the daemon's standard error.
type lastWords struct {
	mu    sync.Mutex
	fatal string
	last  string
	part  []byte
}

const maxLastWords = 200

func (l *lastWords) Write(p []byte) (int, error) {
	os.Stderr.Write(p)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(l.part[:i])); line != "" {
			line = statusField(line)
			if len(line) > maxLastWords {
				line = line[:maxLastWords]
			}
			l.last = line
			if l.fatal == "" && (strings.HasPrefix(line, "fatal error:") || strings.HasPrefix(line, "panic:") || strings.HasPrefix(line, "runtime: out of memory")) {
				l.fatal = line
			}
		}
		l.part = l.part[i+1:]
	}
	if len(l.part) > 4096 {
		l.part = l.part[len(l.part)-4096:]
	}
	return len(p), nil
}

// String is the fatal line, else the last one; "" when nothing was said.
func (l *lastWords) String() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fatal != "" {
		return l.fatal
	}
	return l.last
}

// WorkerReady starts the line a worker prints on standard output once it
// serves, followed by " cpu_us=N": the CPU time it took from being given
// its user (the daemon's log says it, a figure the machine's load does
// not inflate as it does the wall time).
const WorkerReady = "mindmount-worker: ready"

// credentialsDir makes ROOT/credentials/<id> the user's own folder (0700)
// in ROOT/credentials (root's, 0711), moving a token file an earlier
// version kept at ROOT/credentials/<id> into it.
func (ws *Workers) credentialsDir(w *worker) error {
	e := w.entry
	base := filepath.Join(ws.cfg.Root, "credentials")
	if err := os.MkdirAll(base, 0o711); err != nil {
		return err
	}
	os.Chmod(base, 0o711)
	dir := remote.CredentialsDir(ws.cfg.Root, e.ID)
	fi, err := os.Lstat(dir)
	if err == nil && fi.Mode().IsRegular() {
		tmp := dir + ".moving"
		if err := os.Rename(dir, tmp); err != nil {
			return err
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
		if err := os.Rename(tmp, remote.CredentialsFor(ws.cfg.Root, e.ID).Path); err != nil {
			return err
		}
	} else if errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
	} else if err != nil {
		return err
	} else if !fi.IsDir() {
		return fmt.Errorf("%s is neither a folder nor a token file", dir)
	}
	// ROOT/credentials is root's: nothing the user controls is on the way.
	if err := os.Chown(dir, int(e.UID), int(e.GID)); err != nil {
		return err
	}
	return GiveTo(dir, e.UID, e.GID, w.oldIDs...)
}

// workerEnv is a worker's whole environment: no key or token of the
// daemon's, and a git that reads no configuration but the repository's.
func workerEnv() []string {
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=/nonexistent",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"LANG=C.UTF-8",
	}
	for _, k := range []string{"MINDMOUNT_DEBUG", "GOCOVERDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// workerProxy forwards to the worker listening on the abstract socket
// name; answers stream as they come (chat's SSE).
func workerProxy(name string, log *slog.Logger) http.Handler {
	target, _ := url.Parse("http://worker")
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
		},
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", "@"+name)
			},
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     time.Minute,
		},
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			log.Warn("forward to the user's worker", "path", r.URL.Path, "err", err)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"the user's memory cannot be served now"}` + "\n"))
		},
	}
}

// stop ends w's worker: SIGTERM (it commits what is pending), SIGKILL
// after stopGrace or when ctx ends; then the mount is aborted and
// detached and the sockets closed. A start of the same user still under
// way when ctx ends does not delay the kill.
func (ws *Workers) stop(ctx context.Context, w *worker) {
	select {
	case w.op <- struct{}{}:
		defer func() { <-w.op }()
	case <-ctx.Done():
	}
	w.mu.Lock()
	w.stopping = true
	cmd, done, id := w.cmd, w.done, w.entry.ID
	alive := cmd != nil && w.running()
	w.mu.Unlock()
	if alive {
		cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(stopGrace)
		select {
		case <-done:
			ws.log.Info("user's worker stopped; pending changes committed", "user", id)
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		select {
		case <-done:
		default:
			ws.log.Warn("user's worker did not stop in time; killed", "user", id)
			ws.abort(w) // a worker stuck on its own mount gets its answer
			cmd.Process.Kill()
			<-done
		}
	}
	ws.release(w)
}

// abort ends w's FUSE connection without detaching it yet.
func (ws *Workers) abort(w *worker) {
	w.mu.Lock()
	conn := w.conn
	w.mu.Unlock()
	if conn != 0 {
		mount.Abort(conn)
	}
}

// release frees what the daemon held for a worker that is gone: the
// mount's connection is aborted (closing the daemon's /dev/fuse
// descriptor, the last one once the worker is gone, aborts it too) and
// detached, the model socket closed. It takes w.mu only to take the
// fields: the rest runs without a lock.
func (ws *Workers) release(w *worker) {
	w.mu.Lock()
	ctl, f, conn, mnt := w.ctl, w.fuse, w.conn, w.mnt
	w.ctl, w.fuse, w.conn, w.cmd = nil, nil, 0, nil
	w.mu.Unlock()
	if ctl != nil {
		ctl.Close()
	}
	if f != nil {
		if err := abortMount(f, conn, mnt); err != nil {
			ws.log.Warn("unmount", "mountpoint", mnt, "err", err)
		}
		os.Remove(mnt) // an empty mountpoint of a user no longer served
	}
}

// abortMount ends a mount made by MountFd whose server is gone or going:
// the connection aborted (every waiting request fails instead of hanging),
// the daemon's descriptor closed, the mount detached.
func abortMount(f *os.File, conn int, mnt string) error {
	if conn != 0 {
		mount.Abort(conn) // best effort: closing the descriptor aborts it as well
	}
	f.Close()
	return mount.Detach(mnt)
}

// Run stops idle unmounted workers until ctx ends; a worker that ends by
// itself is seen to at once by its watcher (watch).
func (ws *Workers) Run(ctx context.Context) {
	idleSweeps(ctx, ws.cfg.UnloadAfter, &ws.reg, ws.tick)
}

// tick stops the idle workers.
func (ws *Workers) tick(ctx context.Context) {
	ws.mu.Lock()
	ls := make([]*worker, 0, len(ws.users))
	for _, w := range ws.users {
		ls = append(ls, w)
	}
	ws.mu.Unlock()
	for _, w := range ls {
		w.mu.Lock()
		idle := w.running() && w.fuse == nil && w.refs == 0 && time.Since(w.lastUsed) >= ws.cfg.UnloadAfter
		w.mu.Unlock()
		if idle {
			ws.stop(ctx, w)
			w.mu.Lock()
			w.stopping = false
			w.mu.Unlock()
		}
	}
}

// Close stops every worker (each commits what is pending, within
// stopGrace; ctx ending kills them at once), detaches the mounts and
// releases the ROOT lock.
func (ws *Workers) Close(ctx context.Context) error {
	ws.mu.Lock()
	if ws.closed {
		ws.mu.Unlock()
		return nil
	}
	ws.closed = true
	close(ws.quit)
	ws.end()
	ls := make([]*worker, 0, len(ws.users))
	for _, w := range ws.users {
		ls = append(ls, w)
	}
	ws.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws.stop(ctx, w)
		}()
	}
	wg.Wait()
	ws.stopTeams()
	ws.wg.Wait()
	os.Remove(filepath.Join(ws.cfg.Root, HeldFile))
	ws.spares.close()
	if ws.cfg.Cgroups != nil {
		ws.cfg.Cgroups.Remove()
	}
	ws.lock.Close()
	return nil
}

// listenAbstract listens on the abstract unix socket name: no file, no
// path a user could plant a link at; who may connect is checked by peer
// credentials (peerListener).
func listenAbstract(name string) (net.Listener, error) {
	return net.Listen("unix", "@"+name)
}

func randomName() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// peerListener accepts only connections from uid (or root): the daemon's
// model socket answers the one user's worker, never another user who found
// its abstract name.
type peerListener struct {
	net.Listener
	uid uint32
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if uid, ok := PeerUID(c); ok && (uid == l.uid || uid == 0) {
			return c, nil
		}
		c.Close()
	}
}

// PeerUID is the uid of the process at the other end of a unix socket.
func PeerUID(c net.Conn) (uint32, bool) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Ucred
	var cerr error
	raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	if cerr != nil || cred == nil {
		return 0, false
	}
	return cred.Uid, true
}

// PeerListener wraps ln to accept only connections from uid (or root).
func PeerListener(ln net.Listener, uid uint32) net.Listener {
	return &peerListener{Listener: ln, uid: uid}
}
