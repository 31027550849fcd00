package tracker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/memgraph/subtree"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
)

// working marks a flush or HEAD reload in progress (Settle waits for it)
// and takes the work lock that serializes them; call the result when done.
func (t *Tracker) working() (done func()) {
	t.mu.Lock()
	t.busy++
	t.mu.Unlock()
	t.work.Lock()
	return func() {
		t.work.Unlock()
		t.mu.Lock()
		t.busy--
		t.mu.Unlock()
	}
}

// Flush commits what is pending now, without waiting for the debounce.
// Used at shutdown and by tests.
func (t *Tracker) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	defer t.working()()

	t.mu.Lock()
	batch, renames := t.pending, t.renames
	t.pending, t.renames, t.first = map[string]string{}, nil, time.Time{}
	if len(batch) > 0 {
		// Invalid files are retried on every later change: a fix may
		// have come through a path we did not hear about (a rename, a
		// dropped event) and the rule they broke may have changed.
		for p, f := range t.invalid {
			if _, ok := batch[p]; !ok {
				batch[p] = f.writer
			}
		}
	}
	t.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	if why := t.gitBusy(); why != "" {
		// Committing now would race a git command in the backing
		// repository (or land in the middle of a rebase): wait.
		t.mu.Lock()
		was := t.paused
		t.paused = why
		t.mu.Unlock()
		if was != why {
			t.log.Info("commits wait: "+why, "pending", len(batch))
		}
		t.requeue(batch, renames)
		return nil
	}
	t.mu.Lock()
	was := t.paused
	t.paused = ""
	t.mu.Unlock()
	if was != "" {
		t.log.Info("commits resume")
	}
	// A commit made beside us (git pull, git commit in the backing repo)
	// must reach the graph before our commit moves HEAD past it.
	t.syncHeadLocked()

	res := t.examine(batch, renames)
	t.applyGraph(res)
	hash, err := t.commit(res, "")
	if err != nil {
		t.requeue(batch, renames)
		return err
	}
	if len(res.retry) > 0 {
		t.requeue(res.retry, nil)
	}
	t.afterChange(res.touched, hash)
	return nil
}

// gitMarkers are files git keeps in .git while an operation that moves
// HEAD is in progress.
var gitMarkers = map[string]string{
	"index.lock":       "a git command holds .git/index.lock",
	"rebase-merge":     "a git rebase is in progress",
	"rebase-apply":     "a git rebase or am is in progress",
	"MERGE_HEAD":       "a git merge is in progress",
	"CHERRY_PICK_HEAD": "a git cherry-pick is in progress",
	"REVERT_HEAD":      "a git revert is in progress",
	"BISECT_LOG":       "a git bisect is in progress",
}

// gitBusy says why commits must wait, or "".
func (t *Tracker) gitBusy() string {
	for _, name := range slices.Sorted(maps.Keys(gitMarkers)) {
		if _, err := os.Lstat(filepath.Join(t.root, ".git", name)); err == nil {
			return gitMarkers[name]
		}
	}
	return ""
}

// requeue puts a batch back after a failed commit; newer claims win.
func (t *Tracker) requeue(batch map[string]string, renames []renamePair) {
	t.mu.Lock()
	for p, id := range batch {
		if _, ok := t.pending[p]; !ok {
			t.pending[p] = id
		}
	}
	t.renames = append(renames, t.renames...)
	if t.first.IsZero() {
		t.first = time.Now()
	}
	t.last = time.Now()
	t.mu.Unlock()
	t.poke()
}

// afterChange tells subscribers and rewrites the synthesized files. Called
// with t.work held.
func (t *Tracker) afterChange(touched []string, hash string) {
	if hash != "" {
		t.setHead(hash)
		t.packSoon()
	}
	t.notify(touched)
	if t.cfg.WriteSynthesized {
		t.writeSynthesized()
	}
}

// result is what a burst amounts to once every path was read and judged.
type result struct {
	changes []gitrepo.Change
	entries []entry
	touched []string // paths whose graph state or report changed
	graph   []graphOp
	retry   map[string]string // paths that could not be read now -> writer
}

type graphOp struct {
	op       byte // opAdd/opModify = Put, opDelete = Remove, opRename = Rename then Put
	rel      string
	from     string
	data     []byte
	problems bool  // invalid: Put so the graph records the problems
	size     int64 // too large to read: PutTooLarge, data nil
}

// fileState is one path as found on disk and in HEAD.
type fileState struct {
	rel    string
	id     string // author identity
	exists bool
	data   []byte
	exec   bool
	prev   []byte // content in HEAD
	inHead bool
	same   bool  // content equals HEAD: refresh the graph, commit nothing
	link   bool  // a symbolic link: refused
	size   int64 // the size of a file too large to read: refused
}

// examine reads and validates every path of a burst. It records invalid
// files in t.invalid and returns the valid changes. Its steps: judge each
// path (judge), sort the survivors into additions, deletions and
// modifications (sortStates), pair the renames among them (pairRenames),
// and list the changes and message entries (emitAdded, emitDeleted).
func (t *Tracker) examine(batch map[string]string, renames []renamePair) result {
	var res result
	paths := slices.Sorted(maps.Keys(batch))
	if slices.ContainsFunc(paths, func(p string) bool { return filepath.Base(p) == ".gitignore" }) {
		// New rules apply to this very burst.
		if rl, ok := any(t.r).(ignoreReloader); ok {
			rl.ReloadIgnores()
		}
	}
	states := map[string]*fileState{}
	for _, rel := range paths {
		if st := t.judge(rel, batch[rel], &res); st != nil {
			states[rel] = st
		}
	}
	added, deleted := sortStates(paths, states, &res)
	pairs, used := pairRenames(renames, added, deleted)
	emitAdded(added, pairs, &res)
	emitDeleted(deleted, used, &res)
	for _, c := range res.changes {
		res.touched = append(res.touched, c.Path)
	}
	return res
}

// judge reads and judges one path of a burst written by writer. It
// returns the path's state when it is a valid change to commit; otherwise
// it records in res what became of it (invalid, held back, retried,
// nothing to do).
func (t *Tracker) judge(rel, writer string, res *result) *fileState {
	id := writer
	if id == "" {
		id = outsideIdentity
	}
	if t.heldBack(rel, id, res) {
		return nil
	}
	st, probs, err := t.read(rel, id)
	if err != nil {
		// Kept pending, not dropped: the next flush tries again (a
		// pack replaced under a reader, a file being replaced).
		t.log.Warn("cannot read changed file; retried with the next commit", "path", safePath(rel), "err", err)
		if res.retry == nil {
			res.retry = map[string]string{}
		}
		res.retry[rel] = writer
		return nil
	}
	if st == nil { // nothing to commit (a directory, unchanged)
		t.clearInvalid(rel, res)
		return nil
	}
	heldForSecret := slices.ContainsFunc(probs, func(p memgraph.Problem) bool {
		return errors.Is(p.Err, ErrSecret) || errors.Is(p.Err, ErrUnscanned)
	})
	if len(probs) > 0 {
		t.setInvalid(rel, id, contentSum(st.data, st.size), probs, res)
		switch {
		case heldForSecret && memgraph.IsMemoryPath(rel):
			// Valid as a memory, so the graph would serve it: only
			// the committed version may reach an index, the
			// context, recall or a model's prompt.
			if st.inHead {
				res.graph = append(res.graph, graphOp{op: opModify, rel: rel, data: st.prev})
			} else {
				res.graph = append(res.graph, graphOp{op: opDelete, rel: rel})
			}
		case st.exists && memgraph.IsMemoryPath(rel) && !isReadOnlyRefusal(probs):
			res.graph = append(res.graph, graphOp{op: opModify, rel: rel, data: st.data, problems: true})
		case st.size > 0 && memgraph.IsMemoryPath(rel):
			// Too large to read: the graph records the size rule's
			// problem and keeps serving the last valid version.
			res.graph = append(res.graph, graphOp{op: opModify, rel: rel, size: st.size, problems: true})
		}
		return nil
	}
	t.clearInvalid(rel, res)
	return st
}

// heldBack handles the paths a burst never commits whatever they hold: a
// name with a secret, the inbox, a name git cannot hold, an ignored
// untracked file. It reports whether rel was one.
func (t *Tracker) heldBack(rel, id string, res *result) bool {
	if probs := NameProblems(rel); probs != nil && !t.commitSecrets() {
		// A name holding a secret: never committed, never logged in
		// clear (NameProblems shows it redacted); forgotten once it is
		// gone.
		if _, err := os.Lstat(filepath.Join(t.root, filepath.FromSlash(rel))); errors.Is(err, fs.ErrNotExist) {
			t.clearInvalid(rel, res)
		} else {
			t.setInvalid(rel, id, fingerprint(nil), probs, res)
		}
		return true
	}
	if IsInbox(rel) {
		// Never committed (inbox.go); subscribers still hear of it.
		t.clearInvalid(rel, res)
		if t.inboxNews(rel) {
			res.touched = append(res.touched, rel)
		}
		return true
	}
	if dir, ok := t.renamedInbox(rel); ok {
		// The inbox under another name (inboxalias.go): its files
		// are the inbox's, never committed.
		t.clearInvalid(rel, res)
		t.restoreInbox(dir)
		return true
	}
	if bad, key := uncommittable(rel); bad != nil {
		// Reported like an invalid file and left out of the commit:
		// one such name must never block the others.
		t.judgeUncommittable(key, id, bad, res)
		return true
	}
	if t.r.Ignored(rel) && !t.tracked(rel) {
		// .gitignore only keeps untracked files out, as in git: a
		// tracked file stays tracked even when a pattern matches it.
		t.clearInvalid(rel, res)
		return true
	}
	return false
}

// sortStates turns the valid states into modifications (recorded in res
// at once) and returns the additions and deletions, which may pair up as
// renames.
func sortStates(paths []string, states map[string]*fileState, res *result) (added, deleted map[string]*fileState) {
	added, deleted = map[string]*fileState{}, map[string]*fileState{}
	for _, rel := range paths {
		st, ok := states[rel]
		if !ok {
			continue
		}
		switch {
		case st.same:
			res.graph = append(res.graph, graphOp{op: opModify, rel: rel, data: st.data})
		case !st.exists && st.inHead:
			deleted[rel] = st
		case !st.exists:
			// created and removed within the burst: nothing to record,
			// but the graph may hold it from a Put.
			if memgraph.IsMemoryPath(rel) {
				res.graph = append(res.graph, graphOp{op: opDelete, rel: rel})
			}
		case !st.inHead:
			added[rel] = st
		default:
			res.changes = append(res.changes, gitrepo.Change{Path: rel, Data: st.data, Exec: st.exec})
			res.entries = append(res.entries, entry{op: opModify, path: rel, writer: st.id})
			res.graph = append(res.graph, graphOp{op: opModify, rel: rel, data: st.data})
		}
	}
	return added, deleted
}

// pairRenames pairs additions with deletions: explicit pairs first (FUSE
// told us), then identical content (fsnotify cannot pair the two halves
// of a rename). pairs maps a new path to its old one; used holds the old
// paths paired.
func pairRenames(renames []renamePair, added, deleted map[string]*fileState) (pairs map[string]string, used map[string]bool) {
	pairs = map[string]string{} // to -> from
	for _, rp := range renames {
		if added[rp.to] != nil && deleted[rp.from] != nil {
			pairs[rp.to] = rp.from
		}
	}
	used = map[string]bool{}
	for _, from := range pairs {
		used[from] = true
	}
	// Index the deleted files by content so a renamed directory of many
	// files pairs up in linear time.
	byContent := map[string][]string{}
	for _, from := range slices.Sorted(maps.Keys(deleted)) {
		if !used[from] {
			k := fingerprint(deleted[from].prev)
			byContent[k] = append(byContent[k], from)
		}
	}
	for _, to := range slices.Sorted(maps.Keys(added)) {
		if _, ok := pairs[to]; ok {
			continue
		}
		k := fingerprint(added[to].data)
		for i, from := range byContent[k] {
			if !used[from] && bytes.Equal(deleted[from].prev, added[to].data) {
				pairs[to], used[from] = from, true
				byContent[k] = append(byContent[k][:i:i], byContent[k][i+1:]...)
				break
			}
		}
	}
	return pairs, used
}

// emitAdded records the additions, as renames where paired.
func emitAdded(added map[string]*fileState, pairs map[string]string, res *result) {
	for _, to := range slices.Sorted(maps.Keys(added)) {
		st := added[to]
		res.changes = append(res.changes, gitrepo.Change{Path: to, Data: st.data, Exec: st.exec})
		if from, ok := pairs[to]; ok {
			res.entries = append(res.entries, entry{op: opRename, from: from, path: to, writer: st.id})
			res.graph = append(res.graph, graphOp{op: opRename, from: from, rel: to, data: st.data})
			continue
		}
		res.entries = append(res.entries, entry{op: opAdd, path: to, writer: st.id})
		res.graph = append(res.graph, graphOp{op: opAdd, rel: to, data: st.data})
	}
}

// emitDeleted records the deletions; a paired one is listed by its rename.
func emitDeleted(deleted map[string]*fileState, used map[string]bool, res *result) {
	for _, from := range slices.Sorted(maps.Keys(deleted)) {
		res.changes = append(res.changes, gitrepo.Change{Path: from, Delete: true})
		if used[from] {
			continue
		}
		res.entries = append(res.entries, entry{op: opDelete, path: from, writer: deleted[from].id})
		res.graph = append(res.graph, graphOp{op: opDelete, rel: from})
	}
}

// read loads one path from disk and HEAD and judges it. A nil state with no
// error means there is nothing to commit.
func (t *Tracker) read(rel, id string) (*fileState, []memgraph.Problem, error) {
	st := &fileState{rel: rel, id: id}
	tree := t.r.Tree()
	fi, err := tree.Lstat(rel)
	switch {
	// A folder on the way replaced by a symlink is, for the files that
	// were in it, a deletion; the link itself is judged as its own path.
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, subtree.ErrUnsafePath):
	case err != nil:
		return nil, nil, err
	case fi.IsDir():
	case fi.Mode()&fs.ModeSymlink != 0:
		st.link = true
	case !fi.Mode().IsRegular():
		return nil, nil, nil
	case fi.Size() > readLimit(rel):
		st.size = fi.Size() // never read (readBounded)
	default:
		data, err := tree.ReadFile(rel, readLimit(rel))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, subtree.ErrUnsafePath) {
			break // removed, or its folder swapped for a link, while we looked: a deletion
		}
		if errors.Is(err, subtree.ErrNotRegular) || errors.Is(err, subtree.ErrTooLarge) {
			return nil, nil, nil // replaced while we looked; judged again at its own event
		}
		if err != nil {
			return nil, nil, err
		}
		st.exists, st.data, st.exec = true, data, fi.Mode()&0o111 != 0
	}
	prev, inHead, err := t.r.ReadHead(rel)
	if err != nil {
		return nil, nil, err
	}
	st.prev, st.inHead = prev, inHead
	if st.link || st.size > 0 {
		// Judged as what is on disk; never committed, never in the graph.
		return st, t.check(rel, Version{Exists: true, Link: st.link, Size: st.size}, st), nil
	}
	if st.exists && inHead && bytes.Equal(st.data, prev) {
		// Same bytes (our own commit seen late by fsnotify, a rewrite,
		// a revert): only a chmod can make it a change. Otherwise the
		// graph and the report need refreshing, nothing more.
		headExec, _, err := t.r.HeadExec(rel)
		if err != nil {
			return nil, nil, err
		}
		if headExec == st.exec {
			if memgraph.IsMemoryPath(rel) {
				st.same = true
				return st, nil, nil
			}
			return nil, nil, nil
		}
		if !memgraph.IsMemoryPath(rel) || !committedReadOnly(rel, prev) {
			return st, nil, nil
		}
	}
	if !st.exists && !inHead {
		return st, nil, nil
	}
	return st, t.check(rel, Version{Data: st.data, Exists: st.exists}, st), nil
}

// check asks the gate about a path of a burst: after against what HEAD
// holds (st.prev), with the operator's switches.
func (t *Tracker) check(rel string, after Version, st *fileState) []memgraph.Problem {
	before := Version{Data: st.prev, Exists: st.inHead}
	return Check(rel, after, before, Rules{Door: DoorTree, CommitSecrets: t.commitSecrets()})
}

// tracked reports whether HEAD has a file at rel.
func (t *Tracker) tracked(rel string) bool {
	_, ok, err := t.r.ReadHead(rel)
	return ok && err == nil
}

// isReadOnlyRefusal reports whether ps is Judge's refusal of a change to
// a memory that is read_only in HEAD.
func isReadOnlyRefusal(ps []memgraph.Problem) bool {
	return len(ps) == 1 && errors.Is(ps[0].Err, ErrReadOnly)
}

func (t *Tracker) setInvalid(rel, id, sum string, probs []memgraph.Problem, res *result) {
	t.mu.Lock()
	old, had := t.invalid[rel]
	t.invalid[rel] = invalidFile{problems: probs, writer: id, sum: sum}
	t.mu.Unlock()
	if had && slices.Equal(old.problems, probs) {
		return
	}
	for _, p := range probs {
		t.log.Warn("file not committed: "+p.String(), "path", safePath(rel), "writer", id)
	}
	res.touched = append(res.touched, rel)
}

func (t *Tracker) clearInvalid(rel string, res *result) {
	t.mu.Lock()
	_, had := t.invalid[rel]
	delete(t.invalid, rel)
	t.mu.Unlock()
	if had {
		if _, err := t.r.Tree().Lstat(rel); errors.Is(err, fs.ErrNotExist) {
			t.log.Info("invalid file removed; no longer reported", "path", safePath(rel))
		} else {
			t.log.Info("file is valid again", "path", safePath(rel))
		}
		res.touched = append(res.touched, rel)
	}
}

// applyGraph brings the graph in step with the files just judged: valid
// files are put, invalid ones too (the graph records their problems and
// keeps serving the last valid version), read_only refusals are left out so
// the committed version keeps serving.
func (t *Tracker) applyGraph(res result) {
	for _, op := range res.graph {
		fromMem := op.from != "" && memgraph.IsMemoryPath(op.from)
		toMem := memgraph.IsMemoryPath(op.rel)
		switch op.op {
		case opDelete:
			if toMem {
				t.removeMem(op.rel)
			}
		case opRename:
			switch {
			case fromMem && toMem:
				t.renameMem(op.from, op.rel, op.data)
			case fromMem:
				t.removeMem(op.from)
			case toMem:
				t.putMem(op.rel, op.data)
			}
		default:
			if toMem && op.size > 0 {
				t.tooLargeMem(op.rel, op.size)
			} else if toMem {
				t.putMem(op.rel, op.data)
			}
		}
	}
}

// commit writes the valid changes of a burst as one commit. subject
// overrides the message (recovery); "" builds it from the entries.
func (t *Tracker) commit(res result, subject string) (string, error) {
	if len(res.changes) == 0 {
		return "", nil
	}
	msg, author := message(res.entries)
	if subject != "" {
		msg, author = recoveryMessage(subject, res.entries), recoverIdentity
	}
	if author == "" {
		author = defaultIdentity
	}
	if t.cfg.Author != "" {
		author = t.cfg.Author + " (" + author + ")"
	}
	msg, sandboxes := t.withTrailers(msg) // mindmount serve: user and sandbox (authorship.go)
	hash, err := t.commitNow(res.changes, msg, gitrepo.Writer(author))
	if err != nil {
		return "", err
	}
	t.committedSandboxes(sandboxes)
	return hash, nil
}

// commitNow makes one commit, by the debounced path or a direct Write, and
// records the outcome: the status file's last error and the log.
func (t *Tracker) commitNow(changes []gitrepo.Change, msg string, who gitrepo.Author) (string, error) {
	hash, err := t.r.Commit(changes, msg, who, time.Now())
	t.mu.Lock()
	if err != nil {
		t.lastErr = fmt.Sprintf("%s: commit failed: %v", time.Now().Format(time.TimeOnly), err)
	} else {
		t.lastErr = ""
	}
	t.mu.Unlock()
	if err != nil {
		t.log.Error("commit failed; will retry", "err", err, "changes", len(changes))
		return "", err
	}
	if hash != "" {
		t.log.Info("committed", "commit", gitrepo.ShortHash(hash), "subject", gitrepo.Subject(msg), "author", who.Name)
	}
	return hash, nil
}

func fingerprint(b []byte) string {
	h := fnv.New64a()
	h.Write(b)
	return fmt.Sprintf("%x-%d", h.Sum64(), len(b))
}
