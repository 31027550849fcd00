package webui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/hooks"
	"github.com/mindmount/mindmount/memgraph"
)

// Every action that changes files is a prepared change (tracker.Apply,
// the one path for them, as a consolidation's or a sync's): the action
// computes the new files from one HEAD, judges them as the mount would
// (tracker.Judge, the secret scan) and only then hands them to the
// tracker, which writes them into the work tree and commits them as one
// commit authored "ui" with that HEAD as its parent. tracker.Write is for
// fronts that write the work tree themselves and have the tracker judge
// what they wrote (MCP); here nothing is written until it is valid, and a
// HEAD that moved meanwhile (the agent kept writing) only means preparing
// again. Nothing here moves a ref or runs a git command that writes.

// actionTimeout bounds one action, the commit included.
const actionTimeout = time.Minute

// ErrRefused is an action refused before anything was written: the
// message says why and what to do.
var ErrRefused = errors.New("refused")

// invalidError is an edit whose result would be invalid; the edit page
// shows its problems beside the text.
type invalidError struct{ problems []memgraph.Problem }

func (e *invalidError) Error() string {
	if len(e.problems) == 0 {
		return "invalid"
	}
	return "not saved, the file would be invalid: " + e.problems[0].String()
}

// author is the commit identity of an action: "ui", with the session's
// person where known (serve's user, or "admin").
func author(v *view) (gitrepo.Author, string) {
	label := "ui"
	switch {
	case v.sess.admin:
		label = "ui (admin)"
	case v.sess.user != "":
		label = "ui (" + v.sess.user + ")"
	}
	return gitrepo.Writer(label), label
}

// prepareFunc computes an action's files from the commit head (HEAD when
// the action runs) and judges them; an error means nothing is committed.
// No files: nothing to do.
type prepareFunc func(ctx context.Context, head string) ([]planned, error)

// maxActionAttempts bounds the times an action is prepared again because
// HEAD moved before its commit.
const maxActionAttempts = 20

// commitAction prepares an action on HEAD and records it through the
// tracker as one commit whose subject is what (after the author's label),
// on top of that HEAD; when HEAD moved first (a pending change the tracker
// committed before ours, the agent writing), it prepares again. With
// clean, a file the action writes that differs in the work tree from HEAD
// (a change not committed yet, or held back as invalid) refuses the
// action: it would be overwritten unseen.
func (s *Server) commitAction(v *view, what string, clean bool, prepare prepareFunc) (string, error) {
	ctx, cancel := context.WithTimeout(v.r.Context(), actionTimeout)
	defer cancel()
	who, label := author(v)
	for attempt := 0; ; attempt++ {
		if err := v.rt.Tracker.GitBusy(); err != nil {
			return "", err // a rebase or merge by hand: never commit into its middle
		}
		head, err := v.rt.Repo.Head()
		if err != nil {
			return "", err
		}
		plan, err := prepare(ctx, head)
		if err != nil || len(plan) == 0 {
			return "", err
		}
		changes := make([]gitrepo.Change, len(plan))
		for i, p := range plan {
			changes[i] = gitrepo.Change{Path: p.rel, Data: p.data, Delete: p.op == opRemove}
		}
		hash, err := v.rt.Tracker.Apply(ctx, tracker.Change{Changes: changes, Message: actionMessage(label, what, plan),
			Author: who, Parents: []string{head}, Worktree: true, Clean: clean})
		var refused *tracker.RefusedError
		switch {
		case errors.Is(err, tracker.ErrTreeFull):
			return "", err // the tree's size limit: no edit of the text helps (507)
		case errors.As(err, &refused):
			// The gate's answer, shown on the edit page line by line.
			return "", &invalidError{refused.Problems}
		case errors.Is(err, gitrepo.ErrRefMoved) && attempt < maxActionAttempts:
			continue
		case errors.Is(err, gitrepo.ErrDirty):
			return "", fmt.Errorf("%w: %w; it has a change that is not committed yet (or is held back, see the status page); try again in a moment", ErrRefused, err)
		case err == nil && hash == "":
			// The files are as HEAD has them, written without a commit:
			// the tracker judges them again, so that a version it held
			// back as invalid is no longer reported.
			for _, p := range plan {
				v.rt.Tracker.Touch(p.rel, "")
			}
		}
		return hash, err
	}
}

// actionMessage is an action's commit message: who did what, then the
// files one per line, as the tracker's own commits list them.
func actionMessage(label, what string, plan []planned) string {
	var b strings.Builder
	b.WriteString(label + ": " + what + "\n\n")
	for _, p := range plan {
		rel := p.rel
		if strings.IndexFunc(rel, memgraph.IsControl) >= 0 {
			rel = strconv.Quote(rel) // keeps the path on its line
		}
		b.WriteString(string(p.op) + " " + rel + "\n")
	}
	return b.String()
}

// done sends the browser back to the page it acted from, saying what
// happened.
func (s *Server) done(v *view, msg string) {
	next := v.r.PostFormValue("next")
	// Only a page of this repository: never an absolute or
	// scheme-relative URL (an open redirect).
	if !strings.HasPrefix(next, v.base+"/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		next = v.base + "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		u = &url.URL{Path: v.base + "/"}
	}
	q := u.Query()
	q.Set("done", msg)
	u.RawQuery = q.Encode()
	http.Redirect(v.w, v.r, u.String(), http.StatusSeeOther)
}

// failed answers an action that changed nothing.
func (s *Server) failed(v *view, code int, err error) {
	s.render(v.w, "error", code, s.page(v, "", "Not done", map[string]any{"Error": err.Error(), "Back": v.r.PostFormValue("next")}))
}

// canChange asks the write policy (tracker.CanChange) before an action
// writes rel; a refusal keeps its type (tracker.ErrReadOnly, ...).
func canChange(v *view, rel string, scope tracker.Scope) error {
	if err := v.rt.Tracker.CanChange(rel, scope); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRefused, rel, err)
	}
	return nil
}

func actionCode(err error) int {
	var inv *invalidError
	switch {
	case errors.Is(err, ErrNoCommit):
		return http.StatusNotFound
	case errors.Is(err, tracker.ErrTreeFull):
		return http.StatusInsufficientStorage
	case errors.As(err, &inv), errors.Is(err, ErrRefused):
		return http.StatusConflict
	case errors.Is(err, gitrepo.ErrRefMoved), errors.Is(err, tracker.ErrGitBusy):
		return http.StatusServiceUnavailable // the agent kept committing, or git is busy: try again
	}
	return http.StatusInternalServerError
}

// revert undoes one commit: every file it changed gets back the content of
// its first parent, merged three ways with what changed since
// (hooks.MergeFile, in process), as git revert would — but written and committed through the
// tracker. The consolidation cursor and other files under .mindmount/ are
// left alone: undoing a consolidation's memories must not make the next
// run read the same transcript lines again and redo them.
func (s *Server) revert(v *view) {
	ctx := v.r.Context()
	dir := v.rt.Dir
	c, err := resolveCommit(ctx, dir, v.r.PostFormValue("commit"))
	if err != nil {
		s.failed(v, http.StatusNotFound, err)
		return
	}
	if len(c.Parents) == 0 {
		s.failed(v, http.StatusConflict, fmt.Errorf("%w: %s is the first commit; there is nothing before it to go back to", ErrRefused, c.Short))
		return
	}
	parent := c.Parents[0]
	paths, err := changedPaths(ctx, dir, parent, c.Hash)
	if err != nil {
		s.failed(v, http.StatusInternalServerError, err)
		return
	}
	var todo []string
	for _, p := range paths {
		if p != memgraph.StateDir && !strings.HasPrefix(p, memgraph.StateDir+"/") {
			todo = append(todo, p)
		}
	}
	hash, err := s.commitAction(v, revertWhat(c), true, func(ctx context.Context, head string) ([]planned, error) {
		return s.revertPaths(ctx, v, c, parent, head, todo)
	})
	if err != nil {
		s.failed(v, actionCode(err), err)
		return
	}
	if hash == "" {
		s.done(v, "nothing to revert: "+c.Short+" is already undone")
		return
	}
	s.done(v, "reverted "+c.Short+" in commit "+shortHash(hash))
}

// revertWhat is what a revert of c says it does, as "git revert" says it:
// the commit and its subject, quoted ("revert eafbcff6 \"agent: add
// user_memory/x.md\""), clipped to a line.
func revertWhat(c commit) string {
	return "revert " + c.Short + " " + strconv.Quote(memgraph.ClipLine(memgraph.SafeLine(c.Subject), 120))
}

// planned is one file an action writes (data) or removes.
type planned struct {
	rel  string
	data []byte
	op   byte // opAdd, opModify, opRemove
}

// The kinds of planned change, as a commit message lists them.
const (
	opAdd    = 'A'
	opModify = 'M'
	opRemove = 'D'
)

// revertPaths plans the revert of c (onto its first parent) on head:
// each path gets its content before c, merged three ways with what
// changed since.
func (s *Server) revertPaths(ctx context.Context, v *view, c commit, parent, head string, paths []string) ([]planned, error) {
	dir := v.rt.Dir
	var plan []planned
	for _, p := range paths {
		if err := canChange(v, p, tracker.AnyFile); err != nil {
			return nil, err
		}
		before, hadBefore, err := blobAt(ctx, dir, parent, p)
		if err != nil {
			return nil, err
		}
		after, hadAfter, err := blobAt(ctx, dir, c.Hash, p)
		if err != nil {
			return nil, err
		}
		cur, hasCur, err := blobAt(ctx, dir, head, p)
		if err != nil {
			return nil, err
		}
		var target []byte
		switch {
		case hasCur == hadAfter && bytes.Equal(cur, after):
			target = before
		case hasCur == hadBefore && bytes.Equal(cur, before):
			continue // already as before the commit
		case hasCur && hadAfter && hadBefore:
			// The changes from after to before, applied to cur: hooks.MergeFile's
			// rule for the path. A memory's real conflict would keep a retired
			// sibling: a revert refuses instead.
			m, err := hooks.MergeFile(hooks.MergeInput{Path: p, Base: after, Ours: cur, Theirs: before})
			if errors.Is(err, hooks.ErrConflict) || err == nil && (m.Sibling != nil || m.Deleted) {
				return nil, fmt.Errorf("%w: %s changed since %s in the same lines; edit it by hand instead", ErrRefused, p, c.Short)
			}
			if err != nil {
				return nil, err
			}
			target = m.Data
		default:
			return nil, fmt.Errorf("%w: %s was added or removed again since %s; edit it by hand instead", ErrRefused, p, c.Short)
		}
		pl := planned{rel: p, data: target, op: opModify}
		switch {
		case !hadBefore:
			pl.op = opRemove
		case !hasCur:
			pl.op = opAdd
		}
		plan = append(plan, pl)
	}
	return plan, nil
}

// planFile plans writing data to rel on head (the gate judges it against
// head's version when it is applied). Data equal to head's is still planned: it commits nothing but
// replaces what the work tree holds (a version held back as invalid).
func planFile(ctx context.Context, v *view, head, rel string, data []byte) ([]planned, error) {
	_, hasCur, err := blobAt(ctx, v.rt.Dir, head, rel)
	if err != nil {
		return nil, err
	}
	pl := planned{rel: rel, data: data, op: opModify}
	if !hasCur {
		pl.op = opAdd
	}
	return []planned{pl}, nil
}

// setStatus retires (status: retracted) or reactivates a memory.
func (s *Server) setStatus(v *view, retire bool) {
	rel, ok := memPath(v.rt.Graph, v.r.PostFormValue("path"))
	if !ok {
		s.failed(v, http.StatusNotFound, fmt.Errorf("%w: no such memory", ErrRefused))
		return
	}
	kind := memgraph.KindOf(rel)
	if kind == memgraph.KindBlock {
		s.failed(v, http.StatusConflict, fmt.Errorf("%w: %s is always in the context; retiring it would change nothing", ErrRefused, rel))
		return
	}
	verb := "reactivate"
	if retire {
		verb = "retire"
	}
	// The file as the person sees it, which the commit's Clean check
	// holds to be the committed one (a pending change is committed first
	// by Apply, and this is prepared again on top of it).
	hash, err := s.commitAction(v, verb+" "+rel, true, func(ctx context.Context, head string) ([]planned, error) {
		if err := canChange(v, rel, tracker.MemoryFile); err != nil {
			return nil, err
		}
		old, err := readWorktree(v.rt.Dir, rel)
		if err != nil {
			return nil, err
		}
		m, probs := memgraph.Parse(rel, old)
		if len(probs) > 0 {
			return nil, &invalidError{probs}
		}
		switch {
		case retire && !m.Active(), !retire && m.Active():
			return nil, nil // nothing to do
		case retire:
			m.SetStatus(memgraph.StatusRetracted, m.Front.SupersededBy)
		default:
			m.SetStatus(memgraph.StatusActive, "")
		}
		return planFile(ctx, v, head, rel, m.Render())
	})
	switch {
	case err != nil:
		s.failed(v, actionCode(err), err)
	case hash == "":
		s.done(v, rel+" was already "+map[bool]string{true: "retired", false: "active"}[retire])
	default:
		s.done(v, verb+"d "+rel+" in commit "+shortHash(hash))
	}
}

// editForm shows a memory's text in a textarea.
func (s *Server) editForm(v *view, p string) {
	rel, ok := memPath(v.rt.Graph, p)
	if !ok {
		http.Error(v.w, "no such memory", http.StatusNotFound)
		return
	}
	data, err := readWorktree(v.rt.Dir, rel)
	if err != nil {
		http.Error(v.w, "cannot read that memory", http.StatusInternalServerError)
		return
	}
	s.render(v.w, "edit", http.StatusOK, s.page(v, "memories", "Edit "+rel, map[string]any{"Path": rel, "Text": string(data)}))
}

// edit saves a memory from the textarea: validated and scanned as the
// mount would, and nothing written unless valid.
func (s *Server) edit(v *view) {
	rel, ok := memPath(v.rt.Graph, v.r.PostFormValue("path"))
	if !ok {
		s.failed(v, http.StatusNotFound, fmt.Errorf("%w: no such memory", ErrRefused))
		return
	}
	text := strings.ReplaceAll(v.r.PostFormValue("text"), "\r\n", "\n") // browsers send CRLF
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	data := []byte(text)
	// Not clean: the person saves what they see over whatever the file
	// holds (an invalid version held back is what they come here to fix);
	// a pending change is committed first by Apply, so it stays in the
	// history.
	hash, err := s.commitAction(v, "edit "+rel, false, func(ctx context.Context, head string) ([]planned, error) {
		if err := v.rt.Tracker.CanChange(rel, tracker.MemoryFile); err != nil {
			// Shown beside the text, like a validation problem.
			return nil, &invalidError{[]memgraph.Problem{{Path: rel, Msg: err.Error(), Err: err}}}
		}
		return planFile(ctx, v, head, rel, data)
	})
	var inv *invalidError
	switch {
	case errors.As(err, &inv):
		s.render(v.w, "edit", http.StatusUnprocessableEntity, s.page(v, "memories", "Edit "+rel,
			map[string]any{"Path": rel, "Text": text, "Problems": inv.problems}))
	case err != nil:
		s.failed(v, actionCode(err), err)
	case hash == "":
		s.done(v, "no change to "+rel)
	default:
		s.done(v, "saved "+rel+" in commit "+shortHash(hash))
	}
}

// consolidate asks for a consolidation run now. The consolidator commits
// its own run (with its trailers) when it is done.
func (s *Server) consolidate(v *view) {
	if v.rt.Consolidator == nil {
		s.failed(v, http.StatusConflict, fmt.Errorf("%w: consolidation is off for this repository", ErrRefused))
		return
	}
	v.rt.RequestConsolidation()
	s.done(v, "consolidation requested; its commit appears in the timeline when it is done")
}

// review approves (merges) or rejects a consolidation's dream waiting for
// review (consolidate/review.go): what "mindmount review" does.
func (s *Server) review(v *view, approve bool) {
	c := v.rt.Consolidator
	if c == nil {
		s.failed(v, http.StatusConflict, fmt.Errorf("%w: consolidation is off for this repository", ErrRefused))
		return
	}
	n, err := strconv.Atoi(v.r.PostFormValue("n"))
	if err != nil || n < 1 {
		s.failed(v, http.StatusBadRequest, fmt.Errorf("%w: not a dream's number", ErrRefused))
		return
	}
	ctx, cancel := context.WithTimeout(v.r.Context(), actionTimeout)
	defer cancel()
	var hash, what string
	if approve {
		// The tip the page showed: a dream that moved since is refused.
		hash, err = c.Approve(ctx, n, v.r.PostFormValue("tip"))
		what = "merged"
	} else {
		hash, err = c.Reject(ctx, n, v.r.PostFormValue("reason"))
		what = "rejected"
	}
	switch {
	case errors.Is(err, consolidate.ErrNoDream):
		s.failed(v, http.StatusNotFound, err)
	case errors.Is(err, consolidate.ErrNoTip):
		s.failed(v, http.StatusBadRequest, err)
	case errors.Is(err, consolidate.ErrDreamConflict), errors.Is(err, consolidate.ErrDreamMoved):
		s.failed(v, http.StatusConflict, err)
	case err != nil:
		s.log.Warn("review action failed", "err", err)
		s.failed(v, http.StatusInternalServerError, errors.New("the review action failed; see the daemon's log"))
	default:
		s.done(v, fmt.Sprintf("dream %d %s (%s)", n, what, gitrepo.ShortHash(hash)))
	}
}
