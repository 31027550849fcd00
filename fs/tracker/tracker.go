// Package tracker turns file changes in a mindmount repository into git
// commits. The mount (FUSE operations) and watch mode (fsnotify) both feed it
// touched paths; it debounces a burst, skips editor temp files, validates
// memory files, keeps the in-memory graph current, and commits every valid
// change of the burst as one commit whose message lists what was added,
// updated, renamed and removed. Invalid files stay on disk, uncommitted and
// reported in the status text until a later write fixes them.
//
// It also watches the backing tree itself: edits made beside the mount, and
// a HEAD moved by git pull or git revert, reach the graph and the
// subscribers (the mount invalidates kernel caches from there).
//
// Everything that changes the repository goes through its tracker: the
// mount and watch mode (Touch, Renamed), MCP and the web page (Write), and
// the prepared changes of consolidation, sync merges and init (Apply);
// only the tracker calls gitrepo's one commit sequence (Record), and only
// the tracker updates the graph (graph.go).
//
// The package knows nothing about FUSE.
//
// # Lock order
//
// Outermost first; a lock is never taken while one below it is held.
//
//  1. consolidate's run locks (repoLocks, then the flock of
//     .git/mindmount/consolidate.lock): one consolidation per repository,
//     held for a whole run, which calls Apply.
//  2. Tracker.work: the writer's queue. Every flush, recovery, HEAD
//     reload, Apply and Write holds it while it reads HEAD, judges,
//     commits and updates the graph; the listener's Changed runs under
//     it (so a listener must not call back into a writing method).
//  3. Tracker.graphMu, then memgraph.Graph's own locks: the tracker's
//     updates of the graph. Refresh takes it without work, so a request
//     handler of the mount never waits for a commit.
//  4. gitrepo.Repo's commit queue (its mutex), then .git/index.lock, then
//     the ref's .lock file (both O_EXCL files, shared with git itself).
//  5. Leaf locks, held for a few field reads and never across a call out:
//     Tracker.mu (pending paths, invalid files, status), authorship.mu,
//     echoes.mu, claimMu.
//
// packMu is held around a background pack (git repack runs under it, and
// git's own locks order it against commits); it is taken with nothing
// else held and takes nothing of the tracker.
//
// The daemon lock (the flock of .git/mindmount-daemon.lock) is taken once,
// without waiting, when a tracker claims the repository (Run, Recover),
// and held until Close: it orders nothing.
package tracker

import (
	"context"
	"log/slog"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
)

// Config tunes a Tracker. The zero value is usable: defaults are filled in
// by New.
type Config struct {
	// Debounce is the quiet time after the last change before a burst is
	// committed (default 1s).
	Debounce time.Duration
	// MaxWait bounds how long a change may wait while writes keep coming
	// (default 10s).
	MaxWait time.Duration
	// Identities maps a writer's process name ("vim", "sed", "python3") to
	// the commit author ("editor", "agent"). Entries override
	// DefaultIdentities; names in neither map to "agent".
	Identities map[string]string
	// Logger receives warnings about invalid files and commit failures
	// (default slog.Default()).
	Logger *slog.Logger
	// WriteSynthesized writes user_memory.md, character_memory.md,
	// CONTEXT.md and .mindmount/status as real (git-ignored) files after every
	// change. Watch mode sets it; the mount synthesizes them on read.
	WriteSynthesized bool
	// PackThreshold is the number of loose objects above which Run packs
	// the repository in the background (gitrepo.Pack; default 512,
	// negative turns packing off).
	PackThreshold int
	// Rescan is the interval of a safety-net scan for uncommitted changes
	// that fsnotify missed (queue overflow, watch limits). 0 turns it off.
	Rescan time.Duration
	// CommitSecrets commits files in which package secret finds a secret;
	// by default they are kept out of git and reported (secrets.go). The
	// operator's configuration can say so too; the tracked settings file
	// cannot (memgraph.OperatorFile).
	CommitSecrets bool
	// Operator is the operator's local configuration (nil: the
	// repository's own, memgraph.OperatorFile in its git directory).
	// mindmount serve gives every user's tracker ROOT/config instead.
	Operator *memgraph.OperatorSource
	// Listener hears what the tracker does (commits, HEAD moves, reports
	// of fsnotify, control requests) and adds status lines; Listeners
	// fans it out.
	Listener Listener
	// User names the user this tracker commits for (mindmount serve):
	// its commits carry a Mindmount-User trailer (authorship.go).
	User string
	// Author, when set, authors every commit as "Author (identity)":
	// the member a team repository's tracker commits for, whatever
	// program wrote ("alice (agent)" <alice@mindmount.local>).
	Author string
}

// DefaultIdentities maps common editors to "editor"; everything else (shell
// tools an agent drives: sed, tee, python3, ...) is "agent".
var DefaultIdentities = map[string]string{
	"vim": "editor", "vi": "editor", "vim.basic": "editor", "vim.tiny": "editor",
	"nvim": "editor", "nano": "editor", "emacs": "editor", "code": "editor",
	"gedit": "editor", "kate": "editor", "micro": "editor", "hx": "editor",
}

const (
	defaultIdentity = "agent"
	// outsideIdentity authors changes that fsnotify saw and no FUSE writer
	// claimed: somebody edited the backing files directly.
	outsideIdentity = "editor"
	// recoverIdentity authors the start-up recovery commit.
	recoverIdentity = "mindmount"
	// maxPlainFile is the largest non-memory file committed; bigger files
	// are reported and left alone (git hosts refuse them anyway).
	maxPlainFile = 100 << 20
)

// Tracker collects touched paths and commits them. Safe for concurrent use.
type Tracker struct {
	g    *memgraph.Graph
	r    *gitrepo.Repo
	cfg  Config
	log  *slog.Logger
	root string

	inboxMu    sync.Mutex            // guards inboxSeen; taken alone, never with mu
	inboxSeen  map[string]inboxStamp // what each transcript looked like when last reported
	inboxID    dirID                 // the inbox folder's identity (inboxalias.go)
	inboxKnown bool

	mu          sync.Mutex
	pending     map[string]string // rel -> identity; "" = seen by fsnotify, unclaimed
	renames     []renamePair      // explicit renames of the current burst
	first       time.Time         // first change of the current burst
	last        time.Time         // latest change of the current burst
	busy        int               // flushes and HEAD reloads in progress
	invalid     map[string]invalidFile
	running     bool // Run is active: the debounce timer will fire
	watching    bool // fsnotify is live: Settle may use a barrier
	lastErr     string
	paused      string             // why commits wait (a git command in progress)
	headSeen    string             // copy of head for Status, under mu
	lastInfo    gitrepo.CommitInfo // LastCommit of headSeen, cached for Status
	uncommitted []entry            // found by Inspect
	barriers    map[string]chan struct{}
	barrierN    int

	claimMu sync.Mutex
	unlock  func() // releases the daemon lock; nil until claim

	who  authorship // mindmount serve's user and sandboxes (authorship.go)
	echo echoes     // files the tracker wrote itself, whose fsnotify reports are echoes

	usage usage // the work tree's size against its limit (usage.go)

	graphMu     sync.Mutex        // serialises the tracker's updates of the graph (graph.go)
	graphSums   map[string]string // rel -> fingerprint of what the tracker gave the graph; "" removed
	graphWrites atomic.Int64      // updates of the graph (Counts)
	headReloads atomic.Int64      // HEADs moved beside the tracker and reloaded (Counts)

	kick     chan struct{} // Touch -> Run: recompute the debounce deadline
	packKick chan struct{} // a commit was made: packLoop checks the loose objects
	packMu   sync.Mutex    // held while a background pack runs
	ready    chan struct{} // closed once Run's watches are live
	once     sync.Once

	// work serialises flushes, recovery and HEAD reloads: each reads HEAD,
	// changes the graph and commits, and must see the others' results.
	work      sync.Mutex
	head      string            // the commit the graph reflects (under work)
	synth     map[string][]byte // last written synthesized files (under work)
	warnedIgn map[string]bool   // synthesized files found not git-ignored (under work)
}

// invalidFile is a file that is on disk but kept out of git: an invalid
// memory, a changed read_only file, a symlink or an oversized file.
type invalidFile struct {
	problems []memgraph.Problem
	writer   string
	sum      string // content fingerprint, so a rescan skips unchanged ones
}

type renamePair struct{ from, to, writer string }

// New returns a tracker for the repository r whose graph is g. Nothing
// happens until Touch, Recover, Flush or Run is called.
func New(g *memgraph.Graph, r *gitrepo.Repo, cfg Config) *Tracker {
	if cfg.Debounce <= 0 {
		cfg.Debounce = time.Second
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Operator == nil {
		cfg.Operator = &memgraph.OperatorSource{Path: filepath.Join(r.GitDir(), memgraph.OperatorFile)}
	}
	t := &Tracker{
		g:         g,
		r:         r,
		cfg:       cfg,
		log:       cfg.Logger,
		root:      r.Dir(),
		pending:   map[string]string{},
		invalid:   map[string]invalidFile{},
		barriers:  map[string]chan struct{}{},
		kick:      make(chan struct{}, 1),
		packKick:  make(chan struct{}, 1),
		ready:     make(chan struct{}),
		synth:     map[string][]byte{},
		graphSums: map[string]string{},
		warnedIgn: map[string]bool{},
	}
	t.who.user = cfg.User
	g.KeepSkillUses(ReadSkillUses(r.GitDir()), t.saveSkillUses)
	if h, err := r.Head(); err == nil {
		t.setHead(h)
	}
	return t
}

// Graph is the graph the tracker keeps current: read it, never change it
// (every change of the repository goes through the tracker).
func (t *Tracker) Graph() *memgraph.Graph { return t.g }

// Repo is the repository the tracker writes: read it, never commit to it
// (Apply does).
func (t *Tracker) Repo() *gitrepo.Repo { return t.r }

// setHead records the commit the graph reflects. t.work is held (or the
// tracker is not shared yet).
func (t *Tracker) setHead(h string) {
	t.head = h
	t.mu.Lock()
	t.headSeen = h
	t.mu.Unlock()
}

// Identity maps a writer's process name to a commit author.
func (t *Tracker) Identity(writer string) string {
	if writer == "" {
		return ""
	}
	if id, ok := t.cfg.Identities[writer]; ok && id != "" {
		return id
	}
	if id, ok := DefaultIdentities[writer]; ok {
		return id
	}
	return defaultIdentity
}

// IsTemp reports whether rel is an editor or tool temp file or is ignored by
// .gitignore: such files are written freely but never committed.
func (t *Tracker) IsTemp(rel string) bool {
	return IsScratch(rel) || t.r.Ignored(rel)
}

// trackedRel cleans a repo-relative path (memgraph.CleanRel) and reports
// whether the tracker should look at it at all: never .git, never
// synthesized files, never the cache.
func trackedRel(rel string) (string, bool) {
	rel, ok := memgraph.CleanRel(rel)
	if !ok {
		return "", false
	}
	if rel == ".git" || strings.HasPrefix(rel, ".git/") {
		return "", false // the repository's own git directory
	}
	// Other paths git cannot hold (a ".GIT" folder, a backslash, a control
	// character) are kept: examine reports them as not committable.
	if rel == ".mindmount/cache" || strings.HasPrefix(rel, ".mindmount/cache/") {
		return "", false
	}
	if memgraph.IsSynthesized(rel) { // ControlFile among them
		return "", false
	}
	return rel, true
}

// ControlFile is written to ask for a consolidation run. In watch mode it
// is a real file: the tracker calls its listener's Control, removes it, and
// never commits it.
const ControlFile = memgraph.ConsolidateFile

// control handles a write to ControlFile.
func (t *Tracker) control() {
	fn := t.cfg.Listener.Control
	if fn == nil {
		return
	}
	if _, err := t.r.Tree().Lstat(ControlFile); err != nil {
		return // our own removal, or already handled
	}
	if err := t.r.RemoveFile(ControlFile); err != nil {
		t.log.Warn("cannot remove control file", "path", ControlFile, "err", err)
	}
	t.log.Info("consolidation requested through " + ControlFile)
	fn()
}

// Touch records that rel changed. writer is the process name that wrote it
// ("" when unknown, as for fsnotify events: those are authored "editor"
// unless a named writer claims the same path within the burst).
func (t *Tracker) Touch(rel, writer string) {
	if path.Clean(strings.TrimPrefix(rel, "/")) == ControlFile {
		t.control()
		return
	}
	rel, ok := trackedRel(rel)
	if !ok || IsScratch(rel) {
		return
	}
	id := t.Identity(writer)
	t.mu.Lock()
	t.touchLocked(rel, id)
	t.mu.Unlock()
	t.poke()
}

func (t *Tracker) touchLocked(rel, id string) {
	now := time.Now()
	if len(t.pending) == 0 {
		t.first = now
	}
	t.last = now
	// A named writer claims the path; an unnamed fsnotify sighting never
	// takes a claim away.
	if _, ok := t.pending[rel]; !ok || id != "" {
		t.pending[rel] = id
	}
}

// Renamed records a rename of old to new (a FUSE rename). Both paths are
// touched; the commit message lists the pair as a rename when the old path
// is gone and the new one is added in the same burst.
func (t *Tracker) Renamed(old, new, writer string) {
	o, okOld := trackedRel(old)
	n, okNew := trackedRel(new)
	id := t.Identity(writer)
	t.mu.Lock()
	if okOld && !IsScratch(o) {
		t.touchLocked(o, id)
	}
	if okNew && !IsScratch(n) {
		t.touchLocked(n, id)
	}
	if okOld && okNew && !IsScratch(o) && !IsScratch(n) {
		t.renames = append(t.renames, renamePair{o, n, id})
	}
	t.mu.Unlock()
	t.poke()
}

func (t *Tracker) poke() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

func (t *Tracker) observed(rel string) {
	if fn := t.cfg.Listener.Observed; fn != nil {
		fn(rel)
	}
}

func (t *Tracker) notify(paths []string) {
	if len(paths) == 0 {
		return
	}
	sort.Strings(paths)
	if fn := t.cfg.Listener.Changed; fn != nil {
		fn(paths)
	}
}

// Ready is closed once Run watches the backing tree: changes made after
// that are seen.
func (t *Tracker) Ready() <-chan struct{} { return t.ready }

// Pending returns the paths waiting to be committed, sorted.
func (t *Tracker) Pending() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Sorted(maps.Keys(t.pending))
}

// Invalid returns the problems of files kept out of git, sorted by path.
func (t *Tracker) Invalid() []memgraph.Problem {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ps []memgraph.Problem
	for _, f := range t.invalid {
		ps = append(ps, f.problems...)
	}
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Path != ps[j].Path {
			return ps[i].Path < ps[j].Path
		}
		return ps[i].Line < ps[j].Line
	})
	return ps
}

// idle reports whether nothing is pending and no flush or reload runs.
func (t *Tracker) idle() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending) == 0 && t.busy == 0
}

// Settle waits until every change made before the call has been seen and
// processed: committed, or found invalid and reported. With Run active it
// first round-trips a marker through fsnotify, so events already queued in
// the kernel are not missed; without Run it flushes directly. It polls; it
// never sleeps a fixed time.
func (t *Tracker) Settle(ctx context.Context) error {
	t.mu.Lock()
	running, watching := t.running, t.watching
	t.mu.Unlock()
	if watching {
		if err := t.barrier(ctx); err != nil {
			return err
		}
	}
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if !running {
			// No debounce timer will fire: commit ourselves.
			if err := t.Flush(ctx); err != nil {
				return err
			}
		}
		if t.idle() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		t.mu.Lock()
		running = t.running
		t.mu.Unlock()
	}
}

// Counts are what the tracker did since it was made: how often it updated
// the graph (one path each) and how often it reloaded a HEAD moved beside
// it. A write through the mount, a chat or a consolidation updates the
// graph once per path and reloads nothing.
type Counts struct {
	GraphWrites int64
	HeadReloads int64
}

// Counts returns the counters.
func (t *Tracker) Counts() Counts {
	return Counts{GraphWrites: t.graphWrites.Load(), HeadReloads: t.headReloads.Load()}
}
