package tracker

import (
	"context"
	"errors"
	"fmt"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
)

// Edit is what a front that writes the working tree itself (the MCP
// server) reports of one change: the paths it wrote or removed, and the
// renames among them.
type Edit struct {
	Paths   []string
	Renames [][2]string // {old, new}
	Verb    string      // what the writer did to its one changed file ("use", "retire"), said in the subject for "update" (verb.go)
}

// ErrGitBusy is returned by Write, and by Apply of a change to HEAD's
// branch, while a git command holds the backing repository (a rebase, a
// merge, an index lock): nothing was written.
var ErrGitBusy = errors.New("git is busy in the repository")

// GitBusy returns ErrGitBusy, saying why, while a git command holds the
// backing repository (a rebase, a merge, a cherry-pick in progress), or
// nil. Write and Apply ask it; a front about to prepare a change for Apply on a
// person's request (the web page) asks it first too, so the person is
// told to wait instead of a commit landing in the middle of the command.
func (t *Tracker) GitBusy() error {
	if why := t.gitBusy(); why != "" {
		return fmt.Errorf("%w: %s; try again once it is done", ErrGitBusy, why)
	}
	return nil
}

// Write runs fn under the tracker's work lock — no flush, recovery or HEAD
// reload runs meanwhile, so HEAD is what fn reads — and commits exactly the
// paths fn reports as one commit authored by who, at once, without the
// debounce. fn validates and writes the working tree; when it returns an
// error nothing is committed (it must then have written nothing).
//
// A front that validates before writing uses this so that one request is
// one commit with its own author, even while mount writers change other
// files of the same repository: their pending paths stay pending for their
// own commit. The commit message lists the changes under label, the
// writer's name ("mcp (claude-code)").
//
// It returns the new commit ("" when the change equals HEAD). Should a path
// fn wrote turn out invalid after all (a race with a writer beside us), it
// is held back and reported like any invalid file and Write says so.
func (t *Tracker) Write(ctx context.Context, who gitrepo.Author, label string, fn func() (Edit, error)) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	defer t.working()()
	if err := t.GitBusy(); err != nil {
		return "", err
	}
	t.syncHeadLocked()
	ed, err := fn()
	if err != nil {
		return "", err
	}
	batch := map[string]string{}
	for _, p := range ed.Paths {
		rel, ok := trackedRel(p)
		if ok {
			t.sawPath(rel)
		}
		if ok && !IsScratch(rel) {
			batch[rel] = label
		}
	}
	var renames []renamePair
	for _, rp := range ed.Renames {
		o, okO := trackedRel(rp[0])
		n, okN := trackedRel(rp[1])
		if okO && okN {
			renames = append(renames, renamePair{o, n, label})
		}
	}
	if len(batch) == 0 {
		return "", nil
	}
	res := t.examine(batch, renames)
	t.applyGraph(res)
	var hash string
	if len(res.changes) > 0 {
		msg, _ := message(res.entries)
		msg = retitle(msg, res.entries, ed.Verb)
		hash, err = t.commitNow(res.changes, t.userTrailer(msg), who)
		if err != nil {
			// The files are on disk: the debounced path retries them.
			t.requeue(batch, renames)
			return "", fmt.Errorf("commit: %w", err)
		}
	}
	if hash != "" {
		t.echo.mark(t.r.Tree(), res.touched)
	}
	t.afterChange(res.touched, hash)
	var held []memgraph.Problem
	t.mu.Lock()
	for rel := range batch {
		if f, ok := t.invalid[rel]; ok {
			held = append(held, f.problems...)
		}
	}
	t.mu.Unlock()
	if len(held) > 0 {
		return hash, &RefusedError{Problems: held}
	}
	return hash, nil
}

// userTrailer adds the Mindmount-User trailer of a multi-user daemon
// (authorship.go) to a Write's commit. Sandboxes noted since the last
// commit are left for the commit of the mount writers who ran in them.
func (t *Tracker) userTrailer(msg string) string {
	t.who.mu.Lock()
	user := t.who.user
	t.who.mu.Unlock()
	return addTrailers(msg, user, nil)
}
