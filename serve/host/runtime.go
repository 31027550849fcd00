// Package host runs mindmount repositories for the daemons: a Runtime is one
// served repository (its graph, tracker, consolidator and extra services,
// started and stopped as a unit), and a Host is every user of a serve ROOT
// (ROOT/users/<id>/), each a Runtime loaded on first use and unloaded when
// idle. The fronts (the FUSE mount, HTTP, MCP) reach a user's repository
// only through Host.Acquire. Making a repository (InitRepo: "mindmount
// init", "users add", --auto-users, an import into a new folder) and
// upgrading one made before the rename live here too, in one place.
package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/hooks"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/serve/control"
)

// ErrNotMindmount means a directory is not a mindmount repository.
var ErrNotMindmount = errors.New("not a mindmount repository")

// NotMindmountError is the one wording of "dir is not a mindmount repository",
// the same in every command (and matching ErrNotMindmount). Its advice
// names the likely cause, and never tells anyone to init a folder that
// holds other files (/tmp, a home): an empty folder is most likely a
// mountpoint with nothing mounted; a plain git repository can take
// mindmount's files; anything else is the wrong folder.
func NotMindmountError(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case err == nil && len(ents) == 0:
		return fmt.Errorf("%s is %w: it is empty (nothing is mounted there? start mindmount mount REPO %s), or make one with mindmount init %s", dir, ErrNotMindmount, dir, dir)
	case err == nil && isGitTop(dir):
		return fmt.Errorf("%s is %w: it is a git repository without character.md or user.md; add mindmount's files with mindmount init %s", dir, ErrNotMindmount, dir)
	case err == nil:
		return fmt.Errorf("%s is %w: it holds other files and no memory; name the repository's folder, or make a new one with mindmount init NEWDIR", dir, ErrNotMindmount)
	}
	return fmt.Errorf("%s is %w", dir, ErrNotMindmount)
}

func isGitTop(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil
}

// Service is an extra per-repository goroutine (sync, for one): Start runs
// it until ctx ends, Close waits for it to return.
type Service func(ctx context.Context, rt *Runtime)

// RuntimeConfig tunes a Runtime. The zero value tracks changes with the
// tracker's defaults and does not consolidate.
type RuntimeConfig struct {
	// User is the served user whose runtime this is ("" for a
	// single-repository daemon): Runtime.ID, and the Mindmount-User
	// trailer of its commits (tracker.Config.User).
	User string
	// OnTeamProposal receives each change consolidation proposes to an
	// attached team's memory (a serve worker forwards it to the team's
	// writer as a proposal); nil: the proposals are only reported.
	OnTeamProposal func(consolidate.TeamProposal)
	// Author authors every commit as "Author (program)" (tracker.Config):
	// a team repository's runtime commits for one member.
	Author string
	// Root is the ROOT of a served user's repository ("" for a
	// single-repository daemon): where its credentials and the operator's
	// file are, never derived again from the repository's path.
	Root string
	// Debounce, MaxWait and Rescan are the tracker's (see tracker.Config).
	Debounce, MaxWait, Rescan time.Duration
	// WriteSynthesized is watch mode: the indexes, context and status are
	// written as real files.
	WriteSynthesized bool
	// Consolidate turns the consolidator on; Idle and Every are its
	// triggers (see consolidate.Config).
	Consolidate bool
	Idle        time.Duration
	Every       int
	// Provider is the model consolidation calls; nil leaves consolidation
	// waiting for one (the status file says so).
	Provider llm.Provider
	// Identities maps writer process names to commit authors (see
	// tracker.Config).
	Identities map[string]string
	// IndexTokens overrides the index budget of .mindmount/settings (0: the
	// repository's setting, else memgraph.DefaultIndexTokens).
	IndexTokens int
	// Operator is the operator's configuration (see tracker.Config);
	// nil: the repository's own, in its git directory.
	Operator *memgraph.OperatorSource
	// Services run beside the tracker from Start until Close.
	Services []Service
	// Logger receives the runtime's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Runtime is one served repository: graph, tracker, consolidator, services.
type Runtime struct {
	ID, Dir      string // ID is "" for a single-repo daemon
	Root         string // RuntimeConfig.Root
	Repo         *gitrepo.Repo
	Graph        *memgraph.Graph
	Tracker      *tracker.Tracker
	Consolidator *consolidate.Consolidator // nil when consolidation is off
	// Listeners is the tracker's one listener: the parts made after it
	// (the mount, MCP, sync) add theirs here.
	Listeners *tracker.Listeners
	// control is the daemon's control socket (host_control.go); nil
	// before Start or when it could not be opened.
	control *control.Server

	cfg    RuntimeConfig
	log    *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{} // closed when the tracker's Run returned
	runErr error         // what it returned; read after done

	mu       sync.Mutex
	closed   bool
	reviewer *consolidate.Consolidator // Reviewer's, when consolidation is off
}

// OpenRepo opens dir as a mindmount repository: a git work tree with
// character.md or user.md at its top. Anything else gets an error that says
// how to make one.
func OpenRepo(dir string) (*gitrepo.Repo, *memgraph.Graph, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a directory", dir)
	}
	if !IsMindmountRepo(dir) {
		return nil, nil, NotMindmountError(dir)
	}
	r, err := gitrepo.Open(dir)
	if errors.Is(err, gitrepo.ErrNotRepo) {
		return nil, nil, NotMindmountError(dir)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := CheckUpgraded(dir); err != nil {
		return nil, nil, err
	}
	g, err := memgraph.Scan(dir)
	if err != nil {
		return nil, nil, err
	}
	// Built beside the rest of the start (tracker, recovery); Start
	// waits for it, so the first recall after a start does not. Loaded
	// from the index the last start saved in .git, when there is one.
	g.SetRecallFile(RecallFile(r))
	g.WarmRecall()
	return r, g, nil
}

// RecallFile is where a repository's built recall index is saved: in
// its git directory, so it is never committed.
func RecallFile(r *gitrepo.Repo) string {
	return filepath.Join(r.GitDir(), "mindmount", "recall.idx")
}

// IsMindmountRepo reports whether dir holds a git work tree (.git) and
// character.md or user.md at its top.
func IsMindmountRepo(dir string) bool {
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		return false
	}
	_, cerr := os.Stat(filepath.Join(dir, memgraph.CharacterFile))
	_, uerr := os.Stat(filepath.Join(dir, memgraph.UserFile))
	return cerr == nil || uerr == nil
}

// OpenRuntime opens the mindmount repository at dir and builds its tracker
// and, when cfg asks for it, its consolidator. Nothing runs until Start.
func OpenRuntime(dir string, cfg RuntimeConfig) (*Runtime, error) {
	r, g, err := OpenRepo(dir)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if cfg.IndexTokens > 0 {
		g.SetIndexTokens(cfg.IndexTokens)
	}
	rt := &Runtime{Dir: dir, ID: cfg.User, Root: cfg.Root, Repo: r, Graph: g, Listeners: &tracker.Listeners{}, cfg: cfg, log: log}
	rt.Tracker = tracker.New(g, r, tracker.Config{
		Listener:         rt.Listeners.Listener(),
		User:             cfg.User,
		Author:           cfg.Author,
		Debounce:         cfg.Debounce,
		MaxWait:          cfg.MaxWait,
		Rescan:           cfg.Rescan,
		WriteSynthesized: cfg.WriteSynthesized,
		Identities:       cfg.Identities,
		Logger:           log,
		Operator:         cfg.Operator,
	})
	if cfg.Consolidate {
		c := consolidate.New(rt.Tracker, cfg.Provider, rt.consolidateConfig())
		rt.Listeners.Add(tracker.Listener{
			Changed: func(paths []string) {
				for _, p := range paths {
					c.Notify(p)
				}
			},
			// The control file of watch mode; the mount calls
			// RequestConsolidation.
			Control: c.Request,
			Status:  c.Status, // the status file's consolidation line
		})
		rt.Consolidator = c
	}
	return rt, nil
}

// consolidateConfig configures the runtime's consolidator.
func (rt *Runtime) consolidateConfig() consolidate.Config {
	return consolidate.Config{Idle: rt.cfg.Idle, Every: rt.cfg.Every, Logger: rt.log,
		OnStatus: rt.Tracker.StatusChanged, // watch mode's status file follows runs
		// A dream's merge keeps both versions of a memory changed
		// meanwhile; serve's ROOT/config sets every user's default merge
		// mode, the repository's own file overrides it.
		MergeFile: hooks.DreamMerger, Default: rt.cfg.Operator,
		// A change consolidation would make to a team's memory goes to
		// the team's writer as a proposal, never a write.
		OnProposal: rt.cfg.OnTeamProposal}
}

// Reviewer lists, approves and rejects the repository's waiting dreams:
// the runtime's consolidator, or, when consolidation is off, one without
// a model (review needs none), made once.
func (rt *Runtime) Reviewer() *consolidate.Consolidator {
	if rt.Consolidator != nil {
		return rt.Consolidator
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.reviewer == nil {
		rt.reviewer = consolidate.New(rt.Tracker, nil, rt.consolidateConfig())
	}
	return rt.reviewer
}

// RequestConsolidation asks for a consolidation run now; nothing when
// consolidation is off.
func (rt *Runtime) RequestConsolidation() {
	if rt.Consolidator != nil {
		rt.Consolidator.Request()
	}
}

// Start commits what a crash left behind, then runs the tracker, the
// consolidator and the services until Close. It returns once the tracker's
// watches are live (the tracker is Ready).
func (rt *Runtime) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	rt.cancel = cancel
	rt.done = make(chan struct{})
	go func() {
		defer close(rt.done)
		rt.runErr = rt.Tracker.Run(ctx)
	}()
	select {
	case <-rt.Tracker.Ready():
	case <-rt.done:
		cancel()
		return rt.runErr
	}
	// Recover once the watches are live, so that nothing written between
	// the scan and the watch can slip through. A consolidation that
	// crashed between writing and committing goes first: its files and
	// its cursor are committed together with the run's message (the
	// cursor moves only with the memories it accounts for; the tracker's
	// own recovery would hold it back).
	if c := rt.Consolidator; c != nil {
		if err := c.Recover(); err != nil {
			rt.log.Warn("cannot recover an interrupted consolidation; the next run tries again", "err", err)
		}
	}
	if err := rt.Tracker.Recover(ctx); err != nil {
		cancel()
		return err
	}
	if c := rt.Consolidator; c != nil {
		rt.wg.Add(1)
		go func() {
			defer rt.wg.Done()
			c.Loop(ctx)
		}()
	}
	// What a first request would otherwise build, made now: the work
	// tree's size count (the size rule's first question walks the tree)
	// and the recall index OpenRepo started.
	rt.Tracker.TreeUsage()
	rt.Graph.RecallIndex()
	rt.listenControl(ctx)
	for _, s := range rt.cfg.Services {
		rt.wg.Add(1)
		go func() {
			defer rt.wg.Done()
			s(ctx, rt)
		}()
	}
	return nil
}

// Done is closed when the tracker stopped: after Close, or by itself when
// its file watcher failed (Err says why). Nil before Start.
func (rt *Runtime) Done() <-chan struct{} { return rt.done }

// Err is why the tracker stopped; nil while it runs or after a clean Close.
func (rt *Runtime) Err() error {
	select {
	case <-rt.done:
		if errors.Is(rt.runErr, context.Canceled) {
			return nil
		}
		return rt.runErr
	default:
		return nil
	}
}

// Close stops every goroutine Start started, then commits everything left,
// including writes whose events were still queued. ctx bounds the commit.
// Closing twice is harmless.
func (rt *Runtime) Close(ctx context.Context) error {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil
	}
	rt.closed = true
	rt.mu.Unlock()

	var err error
	if rt.cancel != nil {
		rt.cancel()
		select {
		case <-rt.done:
			err = rt.Err()
		case <-ctx.Done():
			err = ctx.Err()
		}
		rt.wg.Wait()
	}
	// Sweep, not just Flush: a write whose event was still in the kernel's
	// queue when the watcher closed is committed too.
	if serr := rt.Tracker.Sweep(ctx); serr != nil && err == nil {
		err = fmt.Errorf("commit pending changes: %w", serr)
	}
	// Give up the repository's daemon lock: an unloaded user may be served
	// again, by us or by mindmount mount.
	rt.Tracker.Close()
	rt.Graph.Close() // a recall build or embedding still running stops
	return err
}
