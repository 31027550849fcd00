package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"

	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/fs/mount"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/httpapi"
	"github.com/mindmount/mindmount/serve/mcpserver"
	"github.com/mindmount/mindmount/serve/remote"
	"github.com/mindmount/mindmount/serve/webui"
)

// workerOptions are the flags mindmount serve starts a worker with. A worker
// is one user's runtime — graph, tracker, consolidation, sync, git — in a
// process that runs with the user's uid and gid, so the kernel, not our
// care, keeps every file operation within the user's own rights.
type workerOptions struct {
	daemon      daemonFlags
	repo, id    string
	uid, gid    uint
	assignedCPU time.Duration // the process's CPU time when it got its user
	fuseFd      int           // the user's mount, mounted by serve (-1: none)
	httpFd      int           // a listening socket serve forwards HTTP and MCP to
	ctl         string        // serve's abstract socket for model calls ("" : no model)
	memory      uint64        // data-segment limit in bytes (0: none)
	fromUID     uint          // the uid serve runs as: the only peer of the HTTP socket
	github      string        // GitHub REST API base URL
	maxBody     int64         // serve's --max-body
	debug       bool
	spareFd     int // the socket on which serve hands a spare worker its user
	// teams are the user's teams as serve's configuration said when the
	// worker became the user (not a flag: read as root, with its groups).
	teams []team.Attachment
}

func (o *workerOptions) AddFlags(fl *flag.FlagSet) {
	o.daemon.AddFlags(fl)
	fl.StringVar(&o.repo, "repo", "", "the user's repository")
	fl.StringVar(&o.id, "user", "", "the user's ID")
	fl.UintVar(&o.uid, "uid", 0, "the uid the worker must run as")
	fl.UintVar(&o.gid, "gid", 0, "the gid the worker must run as")
	fl.StringVar(&o.ctl, "ctl", "", "serve's socket for model calls")
	fl.Uint64Var(&o.memory, "memory", 0, "memory limit (RLIMIT_DATA) in bytes")
	fl.UintVar(&o.fromUID, "from-uid", 0, "the uid of serve, the only peer of the HTTP socket")
	fl.StringVar(&o.github, "github-api", remote.DefaultGitHubAPI, "GitHub REST API base URL")
	fl.Int64Var(&o.maxBody, "max-body", httpapi.DefaultMaxBody, "the largest request body in bytes (serve's --max-body)")
	fl.BoolVar(&o.debug, "debug", false, "log every FUSE request")
	fl.IntVar(&o.spareFd, "spare-fd", 0, "the socket on which serve hands this worker its user")
}

// workerCommand is "mindmount worker".
var workerCommand = newCommand(command{
	name:  "worker",
	usage: "worker (started by mindmount serve, not by hand)",
	help: `Internal: mindmount serve starts one worker per user, with the user's uid and
gid, to run everything that touches the user's repository. It is not meant
to be started by hand.`,
}, runWorkerCommand)

// runWorkerCommand runs a spare worker: it waits for serve to hand it its
// user, then serves that user.
func runWorkerCommand(_ context.Context, o *workerOptions, args []string) error {
	if len(args) != 0 || o.spareFd <= 0 {
		return errors.New("mindmount worker is started by mindmount serve")
	}
	u, err := awaitUser(o.spareFd)
	if errors.Is(err, host.ErrNoAssignment) {
		return nil // serve stopped, or did not need this spare
	}
	if err != nil {
		return err
	}
	return runWorker(u, slog.Default().With("user", u.id))
}

// awaitUser is a spare worker's wait for its user (host_spare.go): it
// gets the user's worker flags and descriptors from serve, and becomes the
// user — uid, gid, no groups, no capability — before anything reads the
// user's repository.
func awaitUser(fd int) (*workerOptions, error) {
	args, fuseFd, httpFd, err := host.AwaitAssignment(fd)
	if err != nil {
		return nil, err
	}
	assigned := cpuTime()
	var o workerOptions
	fl := flag.NewFlagSet("worker", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	o.AddFlags(fl)
	if err := fl.Parse(args); err != nil || fl.NArg() != 0 || o.repo == "" || o.id == "" {
		return nil, fmt.Errorf("serve's flags for this worker: %v %q", err, fl.Args())
	}
	o.fuseFd, o.httpFd, o.assignedCPU = fuseFd, httpFd, assigned
	// The teams' groups, read as root before the drop (ROOT/teams.conf
	// is root's): the kernel then lets the worker read its teams only.
	teams, groups, err := host.MemberTeams(host.RootOf(o.repo), o.id)
	if err != nil {
		slog.Warn("worker: teams configuration refused; no team", "user", o.id, "err", err)
		teams, groups = nil, nil
	}
	o.teams = teams
	if err := host.DropPrivileges(uint32(o.uid), uint32(o.gid), groups...); err != nil {
		return nil, fmt.Errorf("worker for %s: %w", o.id, err)
	}
	return &o, nil
}

// runWorker serves one user until SIGTERM (pending changes committed) or
// until its mount ends.
func runWorker(o *workerOptions, log *slog.Logger) error {
	// No one but root may look into this process: not the user's other
	// processes (ptrace, /proc/PID/mem), which could take the daemon's
	// sockets.
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if uint(os.Getuid()) != o.uid || uint(os.Getgid()) != o.gid {
		return fmt.Errorf("worker for %s runs as uid %d gid %d, not %d %d", o.id, os.Getuid(), os.Getgid(), o.uid, o.gid)
	}
	if err := limitWorker(o.memory, log); err != nil {
		return fmt.Errorf("worker for %s: %w", o.id, err)
	}
	cfg := o.daemon.baseConfig(false, log)
	// The tracker's switch (commit_secrets) is ROOT/config's (root's,
	// read by the worker: keep it 0644), never the user's own
	// .git/mindmount/config: the user owns the repository. A dream's
	// merge mode is the user's own file's, ROOT/config's by default
	// (host.Runtime's consolidateConfig).
	cfg.Root = host.RootOf(o.repo)
	cfg.Operator = &memgraph.OperatorSource{Path: filepath.Join(cfg.Root, host.OperatorConfigFile), Strict: true, RootOnly: true}
	pool := workerModel(o, &cfg, log)
	dreams := &dreamProposals{log: log} // cmd_worker_team_forward.go
	cfg.OnTeamProposal = dreams.forward
	began := time.Now()
	return serveRuntime(o.repo, o.id, cfg, func(ctx context.Context, rt *host.Runtime) (<-chan error, func(bool) error, error) {
		// What a cold user's first read waits for (bench-serve.sh).
		log.Debug("worker: repository open and tracking", "ms", time.Since(began).Milliseconds())
		trimWorkerHeap()
		ended := make(chan error, 2)
		var stops []func(bool) error
		closeTeams, err := workerMount(o, rt, ended, log)
		if err != nil {
			return nil, nil, err
		}
		desk := newTeamDesk(rt, o.teams) // cmd_worker_team_forward.go
		handleTeamVerbs(rt, desk)
		dreams.desk.Store(desk)
		if o.httpFd >= 0 {
			stop, err := serveWorkerHTTP(ctx, o, rt, pool, desk, ended, log)
			if err != nil {
				return nil, nil, err
			}
			stops = append(stops, stop)
		}
		log.Debug("worker: serving", "ms", time.Since(began).Milliseconds())
		fmt.Fprintf(stdout, "%s cpu_us=%d\n", host.WorkerReady, (cpuTime() - o.assignedCPU).Microseconds())
		return ended, func(byItself bool) error {
			for _, s := range stops {
				s(byItself)
			}
			closeTeams() // last: the mount and HTTP read them until now
			return nil
		}, nil
	})
}

// workerModel connects the worker to serve's model pool (--ctl), when it
// consolidates: consolidation takes the pool's background share (cfg's
// provider), chats the chat share (the relay pool returned; nil without
// a model).
func workerModel(o *workerOptions, cfg *host.RuntimeConfig, log *slog.Logger) *llm.Pool {
	if o.ctl == "" || !o.daemon.consolidate {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	p, err := llm.NewRemote(ctx, dialAbstract(o.ctl))
	cancel()
	if err != nil {
		log.Warn("the daemon's model is not reachable; consolidation waits for one", "err", err)
		return nil
	}
	// Chats take the daemon pool's chat share, consolidation its own (a
	// consolidation never queues a chat).
	cfg.Provider = p.Background()
	return llm.NewRelayPool(p)
}

// serveWorkerHTTP serves the user's HTTP (chat, recall, MCP, the web
// page) on the listener serve handed down, to serve alone, and indexes
// the memory history beside it; the returned function stops both.
func serveWorkerHTTP(ctx context.Context, o *workerOptions, rt *host.Runtime, pool *llm.Pool, desk *teamDesk, ended chan<- error, log *slog.Logger) (func(bool) error, error) {
	ln, err := net.FileListener(os.NewFile(uintptr(o.httpFd), "http"))
	if err != nil {
		return nil, fmt.Errorf("http listener: %w", err)
	}
	// Only serve (root) forwards here: the user's other processes must
	// go through serve's credentials like everyone else.
	ln = host.PeerListener(ln, uint32(o.fromUID))
	var teams webui.TeamDesk // nil, not a nil *teamDesk: no teams page
	if len(desk.names) > 0 {
		teams = desk
	}
	srv, err := workerHTTP(rt, pool, teams, o.github, o.maxBody, log)
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithCancel(ctx)
	done, indexed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(hctx, ln); err != nil {
			ended <- err
		}
	}()
	go func() { // the web page's memory history
		defer close(indexed)
		indexHistory(hctx, rt, log)
	}()
	return func(bool) error { cancel(); <-done; <-indexed; return nil }, nil
}

// workerMount serves the user's mount (serve mounted it; o.fuseFd < 0:
// none) with the user's teams at shared/<team>/, and says on ended when
// it ends. The returned function closes the teams.
func workerMount(o *workerOptions, rt *host.Runtime, ended chan<- error, log *slog.Logger) (func(), error) {
	teams, closeTeams, err := workerTeams(rt, o.teams, log)
	if err != nil || o.fuseFd < 0 {
		return closeTeams, err
	}
	teams = forwardTeams(rt, teams, log) // cmd_worker_team_forward.go
	srv, err := mount.Mount(fmt.Sprintf("/dev/fd/%d", o.fuseFd), rt.Tracker, rt.Listeners, mount.Options{
		AllowOther:    true,
		Debug:         o.debug,
		Logger:        log,
		OnConsolidate: rt.RequestConsolidation,
		Owner:         &mount.Owner{UID: uint32(o.uid), GID: uint32(o.gid)},
		Teams:         teams,
	})
	if err != nil {
		closeTeams()
		return func() {}, err
	}
	go func() {
		<-unmountedOutside(srv)
		ended <- errors.New("the mount ended")
	}()
	return closeTeams, nil
}

// A worker's bounds besides its memory (--user-memory): open files and
// processes. Soft and hard limits are the same, so the user cannot raise
// them. RLIMIT_NPROC counts every process of the user's uid, the user's
// own included, when the worker forks (git): it is kept generous.
const (
	workerMaxFiles = 4096
	workerMaxProcs = 1024
)

// limitWorker sets the worker's resource limits, soft and hard alike: a
// process of the user's may lower but never raise a hard limit, so the
// user cannot lift their own worker's bounds. memory is RLIMIT_DATA in
// bytes (0: none).
// workerGCPercent is the collector's target for a worker unless GOGC
// says otherwise: a served repository's heap is mostly the long-lived
// graph and recall index (docs/footprint.md), so the default 100 (the
// heap may grow to twice what is live before a collection) is mostly
// idle headroom multiplied by the number of users.
const workerGCPercent = 50

// historyAfter is how long after its start a worker brings the history
// index up to HEAD (docs/footprint.md).
const historyAfter = 3 * time.Second

// indexHistory brings the history index (the web page's memory history,
// quick once the index reaches HEAD; packs keep it there) up to HEAD, as
// the user, historyAfter after the start: not beside the first requests
// (a request indexes a short tail itself). It returns when ctx ends.
func indexHistory(ctx context.Context, rt *host.Runtime, log *slog.Logger) {
	select {
	case <-time.After(historyAfter):
	case <-ctx.Done():
		return
	}
	if err := rt.Repo.IndexHistory(ctx); err != nil && ctx.Err() == nil {
		log.Warn("cannot index the history; a memory's history may be slow to show", "err", err)
	}
}

// trimWorkerHeap is called once the repository is loaded: loading reads
// and parses every memory, whose garbage the runtime would otherwise keep
// mapped for minutes; it is handed back now, and the collector's target
// lowered (docs/footprint.md has the figures).
func trimWorkerHeap() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(workerGCPercent)
	}
	debug.FreeOSMemory()
}

func limitWorker(memory uint64, log *slog.Logger) error {
	for _, l := range []struct {
		res  int
		n    uint64
		what string
	}{
		{unix.RLIMIT_NOFILE, workerMaxFiles, "open files"},
		{unix.RLIMIT_NPROC, workerMaxProcs, "processes"},
	} {
		if err := unix.Setrlimit(l.res, &unix.Rlimit{Cur: l.n, Max: l.n}); err != nil {
			return fmt.Errorf("limit the worker's %s: %w", l.what, err)
		}
	}
	if memory > 0 && raceBuild {
		log.Info("memory bound not applied: this binary was built with -race")
	}
	if memory > 0 && !raceBuild {
		// One user's runaway work (a huge blob, a model answer) stops this
		// worker, never the daemon or another user. The Go heap is kept
		// well below the hard limit so the collector works before it.
		// RLIMIT_DATA, not RLIMIT_AS: Go reserves address space it never
		// uses (a worker's VSZ is ~1.8 GiB), but only what it writes to
		// counts as data.
		if err := unix.Setrlimit(unix.RLIMIT_DATA, &unix.Rlimit{Cur: memory, Max: memory}); err != nil {
			log.Warn("cannot limit the worker's memory", "err", err)
		}
		debug.SetMemoryLimit(int64(memory / 2))
	}
	return nil
}

// workerHTTP is the user's HTTP API and MCP as the worker serves them to
// serve, which has checked the caller's credentials and forwards only this
// user's requests: it needs none of its own.
func workerHTTP(rt *host.Runtime, pool *llm.Pool, teams webui.TeamDesk, githubAPI string, maxBody int64, log *slog.Logger) (*httpapi.Server, error) {
	users := oneUser{rt}
	// The web page's pages of this user, answered as the user; the
	// session and its CSRF token are serve's (webui Trusted).
	ui, err := webui.New(webui.Config{Single: rt, Trusted: true, Prefix: "/ui/u/" + url.PathEscape(rt.ID), Teams: teams, Logger: log})
	if err != nil {
		return nil, err
	}
	return httpapi.New(httpapi.Config{
		Users:   users,
		Pool:    pool,
		UI:      ui,
		MaxBody: maxBody,
		MCP: mcpserver.NewHandler(func(r *http.Request) (*host.Runtime, func(), error) {
			return users.Acquire(r.Context(), httpapi.RequestUser(r))
		}, mcpserver.Options{Logger: log, Version: versionString()}),
		Git: &remote.API{
			GitHubAPI:   githubAPI,
			Credentials: func(id string) remote.Credentials { return remote.CredentialsFor(rt.Root, id) },
			Logger:      log,
		},
		User:    rt.ID, // log names the user already
		Logger:  log,
		Version: versionString(),
	}), nil
}

// oneUser is the worker's whole user list: itself.
type oneUser struct{ rt *host.Runtime }

func (u oneUser) Acquire(_ context.Context, id string) (*host.Runtime, func(), error) {
	if id != u.rt.ID {
		return nil, nil, fmt.Errorf("%w %q", host.ErrUnknownUser, id)
	}
	return u.rt, func() {}, nil
}

func (u oneUser) Lookup(id string) (host.User, error) {
	if id != u.rt.ID {
		return host.User{}, fmt.Errorf("%w %q", host.ErrUnknownUser, id)
	}
	return u.Users()[0], nil
}

func (u oneUser) Users() []host.User {
	return []host.User{{Entry: host.Entry{ID: u.rt.ID}, Dir: u.rt.Dir, Loaded: true}}
}

// dialAbstract dials serve's abstract unix socket name.
func dialAbstract(name string) func(ctx context.Context) (net.Conn, error) {
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", "@"+name)
	}
}

// cpuTime is the CPU time this process used so far (user and system).
func cpuTime() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
