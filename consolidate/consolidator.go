package consolidate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mindmount/mindmount/memgraph/subtree"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// Author is who consolidation commits are by.
var Author = gitrepo.Writer("consolidator")

// Config tunes a Consolidator. Zero values take the defaults in brackets.
type Config struct {
	Idle       time.Duration // run when transcripts were quiet this long [10m]
	Every      int           // run when this many new user messages arrived [30]
	ChunkChars int           // transcript text per extraction call [12000]
	Candidates int           // existing memories offered per fact by recall [5]
	// TopicCandidates bounds the active memories of the same kind and
	// topic offered per fact, most used first [5].
	TopicCandidates int
	// Retention is how long a fully consolidated transcript stays in the
	// transcripts/ inbox after its last change [30 days]; negative keeps
	// transcripts forever (see inbox.go).
	Retention  time.Duration
	MinBackoff time.Duration // first wait after a failed run [30s]
	MaxBackoff time.Duration // longest wait between failed runs [30m]
	Logger     *slog.Logger  // [slog.Default()]
	// OnStatus is called, without locks held, whenever Status changed
	// outside a commit: a run finished or failed. Watch mode passes the
	// tracker's StatusChanged so the status file is rewritten.
	OnStatus func()
	Now      func() time.Time
	// Operator holds "merge: auto|review" (dream.go): the repository's
	// .git/mindmount/config [that file]; Default, when the repository's
	// says nothing (serve's ROOT/config, for every user) [none: auto].
	Operator, Default *memgraph.OperatorSource
	// MergeFile merges a file changed by a dream and meanwhile on the
	// live branch (hooks.DreamMerger, wired by the daemon) [none: such a
	// dream is not merged and waits on its branch].
	MergeFile FileMerger
	// Scopes are teams whose memories are offered as candidates beside
	// the personal ones, read-only: a fact a team already knows is
	// recognised (NONE), and a change to a team memory becomes a
	// TeamProposal, never a write (scope.go) [none].
	Scopes []memgraph.Scope
	// OnProposal receives each TeamProposal once the chunk that made it
	// is committed [none: they are only in the Report].
	OnProposal func(TeamProposal)
	// Provenance names the source of a transcript that is one batch from
	// elsewhere (a pull request, an issue: provenance.go) [none: every
	// transcript is a conversation].
	Provenance func(transcript string) (Provenance, bool)
}

func (c *Config) defaults() {
	if c.Idle <= 0 {
		c.Idle = 10 * time.Minute
	}
	if c.Every <= 0 {
		c.Every = 30
	}
	if c.ChunkChars <= 0 {
		c.ChunkChars = 12000
	}
	if c.Candidates <= 0 {
		c.Candidates = 5
	}
	if c.TopicCandidates <= 0 {
		c.TopicCandidates = 5
	}
	if c.Retention == 0 {
		c.Retention = DefaultRetention
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 30 * time.Second
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = 30 * time.Minute
		if c.MaxBackoff < c.MinBackoff {
			c.MaxBackoff = c.MinBackoff
		}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Consolidator consolidates the transcripts of one repository.
type Consolidator struct {
	g   *memgraph.Graph
	r   *gitrepo.Repo    // read only: every commit goes through w
	w   *tracker.Tracker // the repository's one writer
	p   llm.Provider
	cfg Config
	log *slog.Logger

	mu         sync.Mutex      // guards the fields below
	lastChange time.Time       // last transcript change heard through Notify
	pending    map[string]int  // transcript -> new user messages
	dirty      map[string]bool // transcripts Notify reported, to count again
	done       map[string]fileStamp
	requested  bool
	failures   int
	nextTry    time.Time
	running    bool
	last       string // last outcome for Status
	waiting    string // "waiting for a model at …" while unreachable

	conflicts      int    // memgraph.TopicConflicts at conflictsAt, for Status
	conflictsAt    uint64 // graph version
	conflictsKnown bool
	wake           chan struct{}
	heard          atomic.Int64 // Notify calls for transcripts (Heard)
}

// repoLocks makes "one run at a time per repository" hold even for two
// Consolidators on the same directory.
var repoLocks sync.Map // dir -> *sync.Mutex

// New returns a Consolidator of the repository t writes: it reads t's
// graph and repository and commits through t (Apply), which updates the
// graph. p may be nil: runs then fail with a clear message and the status
// says no model is configured.
func New(t *tracker.Tracker, p llm.Provider, cfg Config) *Consolidator {
	cfg.defaults()
	return &Consolidator{g: t.Graph(), r: t.Repo(), w: t, p: p, cfg: cfg, log: cfg.Logger,
		pending: map[string]int{}, dirty: map[string]bool{}, done: map[string]fileStamp{}, wake: make(chan struct{}, 1)}
}

// Report is the outcome of one Run.
type Report struct {
	Commits      []string       // one per consolidated chunk
	Sources      []string       // "transcripts/s1.jsonl#1-5"
	Messages     int            // messages consumed
	Added        int            // memory files added (a contradiction's new fact too)
	Updated      int            // memories a refinement (UPDATE) changed
	Contradicted int            // memories retired as contradicted
	Unchanged    int            // facts already remembered (a use stamped)
	Skipped      int            // decisions or facts refused
	Redactions   int            // secrets removed: before the model saw the transcript, and from its answers
	Problems     []string       // malformed lines, refused model output, …
	Skills       []string       // skills/<name>/SKILL.md written or updated (skill.go)
	Merges       []string       // the merge commits of the dreams merged (merge: auto)
	Pending      []string       // dreams waiting for review (merge: review)
	Proposals    []TeamProposal // changes to team memories, for their team to review
}

// String is the one-line outcome the CLI prints and the status file shows.
func (r Report) String() string {
	if len(r.Sources) == 0 {
		return "nothing new to consolidate"
	}
	s := fmt.Sprintf("%s: %s", strings.Join(r.Sources, ", "), counts(r.Added, r.Updated, r.Contradicted, r.Unchanged, r.Skipped))
	if r.Redactions > 0 {
		s += fmt.Sprintf(" (%d secrets redacted)", r.Redactions)
	}
	for _, d := range r.Pending {
		s += "; " + d + " waits for review (mindmount review)"
	}
	return s
}

func counts(add, upd, con, none, skip int) string {
	s := fmt.Sprintf("%d added, %d updated, %d contradicted, %d unchanged", add, upd, con, none)
	if skip > 0 {
		s += fmt.Sprintf(", %d skipped", skip)
	}
	return s
}

func (r *Report) problem(format string, args ...any) {
	r.Problems = append(r.Problems, redacted(fmt.Sprintf(format, args...)))
}

// ErrNoProvider is Run's error when no language model is configured (the
// Consolidator has no provider); llm.ErrNoModel is a configured one that
// does not answer.
var ErrNoProvider = errors.New("no language model configured; " + llm.NoModelHelp)

// Run consolidates everything new since the cursor, once, in the
// foreground. Transcripts are processed in chunks; each chunk is committed
// with its cursor advance, so a failure keeps what earlier chunks
// committed and changes nothing for the failed one.
func (c *Consolidator) Run(ctx context.Context) (rep Report, err error) {
	if c.p == nil {
		return rep, ErrNoProvider
	}
	lk, _ := repoLocks.LoadOrStore(c.r.Dir(), &sync.Mutex{})
	lk.(*sync.Mutex).Lock()
	defer lk.(*sync.Mutex).Unlock()
	unlock, err := lockRepo(c.r.GitDir())
	if err != nil {
		return rep, err
	}
	defer unlock()
	// The run holds the dream it writes until it ends: review lists and
	// merges only what a run has finished with.
	hold, err := holdDreams(c.r.GitDir())
	if err != nil {
		return rep, err
	}
	defer hold.release()

	if err := c.checkFolders(); err != nil {
		return rep, err
	}
	if err := c.Recover(); err != nil {
		return rep, err
	}
	mode := c.mergeMode()
	cur, own, err := c.startCursor(mode)
	if err != nil {
		return rep, err
	}
	// merge: auto makes each chunk a dream merged before the next starts
	// (so the next one's candidates include what it added); merge: review
	// makes the run one dream, which waits.
	st := &runState{mode: mode, cur: cur, own: own, hold: hold, rep: &rep}
	defer func() {
		if mode == memgraph.MergeReview && st.d != nil && st.d.tip != st.d.base {
			rep.Pending = append(rep.Pending, st.d.branch)
		}
	}()
	paths, err := c.transcripts()
	if err != nil {
		return rep, err
	}
	for _, rel := range paths {
		t, start, ok, err := c.readNew(rel, st)
		if err != nil {
			return rep, err
		}
		if ok {
			if err := c.runTranscript(ctx, t, start, st); err != nil {
				return rep, err
			}
		}
	}
	c.expire(paths, st.cur)
	return rep, nil
}

// runState is what one Run carries from transcript to transcript: the
// merge mode, the cursor (and the run's own), the dream being written and
// the hold on it, and the report.
type runState struct {
	mode     memgraph.MergeMode
	cur, own *Cursor
	d        *dream
	hold     *dreamHold
	rep      *Report
}

// readNew reads a transcript with messages past the cursor: ok is false
// for one already consumed, gone, not a regular file or too large (a
// problem in the report); its line problems go to the report.
func (c *Consolidator) readNew(rel string, st *runState) (t *Transcript, start int, ok bool, err error) {
	tree := c.r.Tree()
	info, err := tree.Lstat(rel)
	if err != nil || !info.Mode().IsRegular() {
		return nil, 0, false, nil // vanished since the listing, or not a file (a link, a FIFO)
	}
	stamp := fileStamp{info.Size(), info.ModTime(), st.cur.Transcripts[rel]}
	if c.consumed(rel, stamp) {
		return nil, 0, false, nil
	}
	if info.Size() > MaxTranscriptSize {
		c.log.Warn("transcript too large; split it into smaller files", "transcript", rel, "bytes", info.Size(), "limit", MaxTranscriptSize)
		st.rep.problem("%s: %d bytes, more than the %d a transcript may have; skipped", rel, info.Size(), MaxTranscriptSize)
		return nil, 0, false, nil
	}
	data, err := tree.ReadFile(rel, MaxTranscriptSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, subtree.ErrUnsafePath) || errors.Is(err, subtree.ErrNotRegular) || errors.Is(err, subtree.ErrTooLarge) {
			return nil, 0, false, nil // replaced since the listing; seen again at the next run
		}
		return nil, 0, false, err
	}
	t = ParseTranscript(rel, data)
	start, rewritten := st.cur.Start(t)
	if rewritten {
		c.log.Warn("transcript was rewritten below the cursor; consolidating it again from the start", "transcript", rel)
	}
	if start >= len(t.Messages) {
		c.markConsumed(rel, stamp)
		return nil, 0, false, nil
	}
	for _, p := range t.Problems {
		c.log.Warn("transcript line skipped", "problem", p.String())
		st.rep.problem("%s", p.String())
	}
	return t, start, true, nil
}

// runTranscript consolidates a transcript's messages from start, chunk by
// chunk: each chunk is committed with its cursor advance in a dream (one
// per chunk, merged at once, unless the run waits for review).
func (c *Consolidator) runTranscript(ctx context.Context, t *Transcript, start int, st *runState) error {
	for _, ch := range chunks(t, start, len(t.Messages), c.cfg.ChunkChars) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if st.d == nil || st.mode != memgraph.MergeReview {
			d, err := c.newDream(st.cur.Dreams)
			if err != nil {
				return err
			}
			st.d = d
			if err := st.hold.set(d.branch); err != nil {
				return err
			}
		}
		next := st.cur.Clone()
		next.Advance(t, ch.hi)
		ownNext := st.own.Clone()
		ownNext.Advance(t, ch.hi)
		ownNext.Dreams = next.Dreams
		if err := c.runChunk(ctx, t, ch, ownNext, st.rep, st.d); err != nil {
			return err
		}
		if st.mode != memgraph.MergeReview {
			merged, err := c.merge(ctx, st.d, "", 0)
			if err != nil {
				return fmt.Errorf("%s: %w", st.d.branch, err)
			}
			st.rep.Merges = append(st.rep.Merges, merged)
		}
		st.cur, st.own = next, ownNext
	}
	return nil
}

// ErrLinkedFolder means a folder consolidation writes into is a symbolic
// link: the repository's files never leave it through a link, so the run
// refuses to start instead of finding every path unusable.
var ErrLinkedFolder = errors.New("is a symbolic link; consolidation writes only into the repository's own folders (replace the link by the folder itself)")

// checkFolders refuses a run whose memory or cursor folder is a symbolic
// link (ErrLinkedFolder).
func (c *Consolidator) checkFolders() error {
	for _, dir := range []string{memgraph.UserDir, memgraph.CharacterDir, path.Dir(CursorFile)} {
		st, err := c.r.Tree().Lstat(dir)
		if err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s %w", dir, ErrLinkedFolder)
		}
	}
	return nil
}

// MaxTranscriptSize bounds one transcript file; larger files are reported
// and skipped rather than read into memory.
const MaxTranscriptSize = 32 << 20

// fileStamp identifies a transcript version that was fully consumed, so
// later runs skip re-reading the (growing) pile of old transcripts.
type fileStamp struct {
	size   int64
	mtime  time.Time
	cursor CursorEntry
}

func (c *Consolidator) consumed(rel string, st fileStamp) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.done[rel]
	return ok && old == st
}

func (c *Consolidator) markConsumed(rel string, st fileStamp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done[rel] = st
}

// headCursor reads the committed cursor: the truth, because it only ever
// moves in the commit that holds the memories it accounts for.
func (c *Consolidator) headCursor() (*Cursor, error) {
	data, ok, err := c.r.ReadHead(CursorFile)
	if err != nil {
		return nil, fmt.Errorf("reading the cursor: %w", err)
	}
	if !ok {
		data = nil
	}
	return loadCursor(c.r, data)
}

// transcripts lists transcript files: everything under transcripts/ that is
// not hidden or an editor temp file (the tracker's one rule).
func (c *Consolidator) transcripts() ([]string, error) {
	var out []string
	err := c.r.Tree().WalkDir(memgraph.TranscriptsDir, func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			if rel == memgraph.TranscriptsDir && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, subtree.ErrUnsafePath)) {
				return fs.SkipDir // no inbox, or a link where it should be: nothing to read
			}
			return nil
		}
		name := d.Name()
		if rel != memgraph.TranscriptsDir && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() || tracker.IsScratch(name) {
			return nil
		}
		// git-ignored or not: transcripts/ is a local inbox that git
		// ignores by design (inbox.go).
		out = append(out, rel)
		return nil
	})
	sort.Strings(out)
	return out, err
}

// source names a message range: "transcripts/s1.jsonl#1-5".
func source(rel string, lo, hi int) string {
	if hi-lo == 1 {
		return fmt.Sprintf("%s#%d", rel, lo+1)
	}
	return fmt.Sprintf("%s#%d-%d", rel, lo+1, hi)
}

// Recover finishes a run that wrote its files to the work tree but did not
// commit them (a crash between the two): the work tree cursor then differs
// from HEAD's and names the files of that run, which are committed with
// the run's message. Messages are thereby consolidated exactly once. The
// change tracker's own recovery, when it runs first, has the same effect.
func (c *Consolidator) Recover() error {
	wt, err := c.r.Tree().ReadFile(CursorFile, MaxTranscriptSize)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, subtree.ErrUnsafePath) {
		return nil
	}
	if err != nil {
		return err
	}
	head, _, err := c.r.ReadHead(CursorFile)
	if err != nil {
		return err
	}
	if bytes.Equal(wt, head) {
		return nil
	}
	cur, err := ParseCursor(wt)
	if err != nil || cur.Last == nil {
		c.log.Warn("the work tree cursor differs from the committed one and cannot be recovered; the committed one is used", "file", CursorFile)
		return nil
	}
	rules := c.gateRules()
	changes := []gitrepo.Change{}
	for _, rel := range cur.Last.Files {
		if !allowedMemoryPath(rel) {
			continue
		}
		data, err := c.r.Tree().ReadFile(rel, MaxTranscriptSize)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, subtree.ErrUnsafePath) || errors.Is(err, subtree.ErrNotRegular) {
			continue
		}
		if err != nil {
			return err
		}
		prev, inHead, err := c.r.ReadHead(rel)
		if err != nil {
			return err
		}
		before := tracker.Version{Data: prev, Exists: inHead}
		if probs := tracker.Check(rel, tracker.Version{Data: data, Exists: true}, before, rules); len(probs) > 0 {
			c.log.Warn("not recovering a file the gate refuses", "file", rel, "problem", redacted(probs[0].String()))
			continue
		}
		changes = append(changes, gitrepo.Change{Path: rel, Data: data})
	}
	changes = append(changes, gitrepo.Change{Path: CursorFile, Data: wt})
	msg := cur.Last.Message + "\nMindmount-Recovered: true\n"
	// The files are on disk as read: committed, not written again.
	hash, err := c.w.Apply(context.Background(), tracker.Change{Changes: changes, Message: msg, Author: Author, When: c.cfg.Now()})
	if err != nil {
		return fmt.Errorf("recovering an interrupted consolidation: %w", err)
	}
	c.log.Info("recovered an interrupted consolidation", "commit", hash, "files", len(changes)-1)
	return nil
}

// allowedMemoryPath reports whether consolidation may write rel: a
// markdown file directly inside user_memory/ or character_memory/ with a
// valid slug. Everything the model names goes through this gate.
func allowedMemoryPath(rel string) bool {
	dir, file := path.Split(rel)
	if dir != memgraph.UserDir+"/" && dir != memgraph.CharacterDir+"/" {
		return false
	}
	slug, ok := strings.CutSuffix(file, ".md")
	return ok && memgraph.ValidSlug(slug)
}
