package tracker

import (
	"context"
	"path/filepath"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
)

// Change is a prepared change that a writer beside the mount hands the
// tracker: files, message, author and parents (gitrepo.Commit, the one
// description of a commit). Consolidation, sync merges, mindmount init and
// the web page's actions prepare one; the tracker records it. A merge (a
// sync's, a dream's) is a Change with two parents whose files the merge
// drivers computed; a dream's own commits are Changes with Branch set,
// and a rejected dream's branch goes away by one with DeleteBranch.
type Change = gitrepo.Commit

// Writer records prepared changes and returns the commit: a *Tracker, or
// Alone where no tracker serves the repository.
type Writer interface {
	Apply(ctx context.Context, c Change) (string, error)
}

// Apply records c as one commit and returns it ("" when a one-parent
// change equals HEAD). It is the one way code beside the tracker changes a
// repository:
//
//   - what is pending is committed first (as Flush), so a merge or a
//     consolidation never lands under an uncommitted edit;
//   - a HEAD moved beside the tracker (a git command) is reloaded;
//   - the commit goes through gitrepo's one sequence (Record), with c's
//     parents checked against HEAD (gitrepo.ErrRefMoved when it moved);
//   - the graph is updated once, from c's bytes, without reading the
//     files again, HEAD is known for ours (no reload), fsnotify's echo
//     of the files c wrote is dropped, and the listener hears the paths
//     once.
//
// A change that writes the work tree is held to the tree's size limit
// (changeRoom): one that would grow it past the limit is refused with
// ErrTreeFull, and nothing is written.
//
// A change on another branch (c.Branch), a commit or the branch's
// deletion, leaves HEAD, the graph and the work tree alone. When Parents is empty the commit goes on top of HEAD as
// the tracker finds it. c.When defaults to now.
func (t *Tracker) Apply(ctx context.Context, c Change) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if c.Branch == "" {
		if err := t.Flush(ctx); err != nil {
			return "", err
		}
	}
	defer t.working()()
	if c.Branch == "" {
		// A change of HEAD's branch in the middle of a person's rebase or
		// merge would land under their command (a rebase's detached HEAD,
		// a merge's index): the caller retries later, as Write's do. A
		// dream's commit on its own branch touches nothing of theirs.
		if err := t.GitBusy(); err != nil {
			return "", err
		}
	}
	t.syncHeadLocked()
	if err := gate(t.r, c, Rules{Door: DoorPrepared, CommitSecrets: t.commitSecrets()}); err != nil {
		return "", err
	}
	if err := t.changeRoom(c); err != nil {
		return "", err
	}
	hash, err := t.applyLocked(c)
	if err != nil {
		t.recount() // changeRoom recorded sizes the tree may not have
	}
	return hash, err
}

// applyLocked records c; t.work is held.
func (t *Tracker) applyLocked(c Change) (string, error) {
	if c.When.IsZero() {
		c.When = time.Now()
	}
	var written []string
	if c.Worktree {
		for _, ch := range c.Changes {
			written = append(written, ch.Path)
		}
		t.echo.expect(written)
	}
	hash, err := t.r.Record(c)
	if c.Worktree {
		for _, rel := range t.echo.settle(t.r.Tree(), written, err == nil) {
			t.Touch(rel, "")
		}
	}
	if err != nil || hash == "" || c.Branch != "" {
		return hash, err
	}
	t.log.Info("committed", "commit", gitrepo.ShortHash(hash), "subject", gitrepo.Subject(c.Message), "author", c.Author.Name, "parents", max(1, len(c.Parents)))
	touched := t.putGraph(c.Changes)
	t.afterChange(touched, hash)
	return hash, nil
}

// putGraph brings the graph in step with committed changes from their
// bytes (one update per path, no read of the file) and forgets what was
// reported invalid at those paths: they are now committed as given. It
// returns the paths, sorted and once each.
func (t *Tracker) putGraph(changes []gitrepo.Change) []string {
	last := make(map[string]gitrepo.Change, len(changes))
	for _, c := range changes {
		last[c.Path] = c // the later change of a path wins, as in Record
	}
	touched := make([]string, 0, len(last))
	for rel, c := range last {
		touched = append(touched, rel)
		t.mu.Lock()
		delete(t.invalid, rel)
		t.mu.Unlock()
		if !memgraph.IsMemoryPath(rel) {
			continue
		}
		if c.Delete {
			t.removeMem(rel)
		} else {
			t.putMem(rel, c.Data)
		}
	}
	return touched
}

// Alone is the Writer of a repository that no tracker serves: mindmount
// init and import, and a sync run by the CLI without a daemon. It records
// prepared changes through the same commit sequence and has no graph to
// keep. Each Apply holds the repository's daemon lock (LockAlone) while it
// commits, so it never writes beside a tracker: while one serves the
// repository, in this process or another, Apply is refused with
// ErrDaemonRunning and records nothing. A command that holds the lock for
// its whole run (LockDaemon) shares it.
// The gate (Check) judges c as it does for a tracker, as a change from
// Door (a prepared change when zero; DoorInit, DoorImport), with the
// operator's switches from Operator (the repository's own
// .git/mindmount/config when nil).
type Alone struct {
	Repo     *gitrepo.Repo
	Operator *memgraph.OperatorSource
	Door     Door
}

// Check asks the gate about c without recording it: a *RefusedError
// lists every problem. Apply asks again.
func (a Alone) Check(c Change) error {
	src := a.Operator
	if src == nil {
		src = &memgraph.OperatorSource{Path: filepath.Join(a.Repo.GitDir(), memgraph.OperatorFile)}
	}
	o, _ := src.Get()
	return gate(a.Repo, c, Rules{Door: a.Door, CommitSecrets: o.CommitSecrets})
}

// Apply records c (see Tracker.Apply for what c means).
func (a Alone) Apply(ctx context.Context, c Change) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	unlock, err := a.Repo.LockAlone()
	if err != nil {
		return "", err
	}
	defer unlock()
	if err := a.Check(c); err != nil {
		return "", err
	}
	if c.When.IsZero() {
		c.When = time.Now()
	}
	return a.Repo.Record(c)
}
