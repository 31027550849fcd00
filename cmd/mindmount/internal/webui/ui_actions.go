package webui

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
)

// Every action is one tracker.Write: the tracker holds its work lock while
// the closure reads HEAD, validates and writes the work tree, then commits
// exactly those paths as one commit authored "ui". Nothing here moves a
// ref or runs a git command that writes.

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

// write runs one action through the tracker.
func (s *Server) write(v *view, what string, fn func() (tracker.Edit, error)) (string, error) {
	ctx, cancel := context.WithTimeout(v.r.Context(), actionTimeout)
	defer cancel()
	who, label := author(v)
	if what != "" {
		label += " " + what
	}
	return v.rt.Tracker.Write(ctx, who, label, fn)
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
	case errors.As(err, &inv), errors.Is(err, ErrRefused):
		return http.StatusConflict
	case errors.Is(err, tracker.ErrGitBusy):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// revert undoes one commit: every file it changed gets back the content of
// its first parent, merged three ways with what changed since (git
// merge-file), as git revert would — but written and committed through the
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
	hash, err := s.write(v, "revert "+c.Short, func() (tracker.Edit, error) {
		return s.revertPaths(ctx, v, c, parent, todo)
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

// planned is one file an action writes (data) or removes (remove).
type planned struct {
	rel    string
	data   []byte
	remove bool
}

func (s *Server) revertPaths(ctx context.Context, v *view, c commit, parent string, paths []string) (tracker.Edit, error) {
	dir := v.rt.Dir
	var plan []planned
	for _, p := range paths {
		if err := canChange(v, p, tracker.AnyFile); err != nil {
			return tracker.Edit{}, err
		}
		before, hadBefore, err := blobAt(ctx, dir, parent, p)
		if err != nil {
			return tracker.Edit{}, err
		}
		after, hadAfter, err := blobAt(ctx, dir, c.Hash, p)
		if err != nil {
			return tracker.Edit{}, err
		}
		cur, hasCur, err := blobAt(ctx, dir, "HEAD", p)
		if err != nil {
			return tracker.Edit{}, err
		}
		// A change waiting for its commit would be overwritten unseen.
		wt, werr := readWorktree(dir, p)
		hasWT := werr == nil
		if werr != nil && !errors.Is(werr, fs.ErrNotExist) {
			return tracker.Edit{}, werr
		}
		if hasWT != hasCur || !bytes.Equal(wt, cur) {
			return tracker.Edit{}, fmt.Errorf("%w: %s has a change that is not committed yet; try again in a moment", ErrRefused, p)
		}
		var target []byte
		keep := hadBefore
		switch {
		case hasCur == hadAfter && bytes.Equal(cur, after):
			target = before
		case hasCur == hadBefore && bytes.Equal(cur, before):
			continue // already as before the commit
		case hasCur && hadAfter && hadBefore:
			merged, ok, err := mergeFile(ctx, cur, after, before)
			if err != nil {
				return tracker.Edit{}, err
			}
			if !ok {
				return tracker.Edit{}, fmt.Errorf("%w: %s changed since %s in the same lines; edit it by hand instead", ErrRefused, p, c.Short)
			}
			target = merged
		default:
			return tracker.Edit{}, fmt.Errorf("%w: %s was added or removed again since %s; edit it by hand instead", ErrRefused, p, c.Short)
		}
		if keep {
			if probs := checkContent(p, target, curOrNil(cur, hasCur)); len(probs) > 0 {
				return tracker.Edit{}, &invalidError{probs}
			}
		}
		plan = append(plan, planned{rel: p, data: target, remove: !keep})
	}
	return apply(v.rt.Repo, plan)
}

func curOrNil(b []byte, ok bool) []byte {
	if !ok {
		return nil
	}
	if b == nil {
		return []byte{}
	}
	return b
}

// apply writes the plan into the work tree beneath its root.
func apply(r *gitrepo.Repo, plan []planned) (tracker.Edit, error) {
	var ed tracker.Edit
	for _, p := range plan {
		var err error
		if p.remove {
			err = r.RemoveFile(p.rel)
		} else {
			err = r.WriteFile(p.rel, p.data, false)
		}
		if err != nil {
			return ed, err // the tracker commits what was written (ed) no more
		}
		ed.Paths = append(ed.Paths, p.rel)
	}
	return ed, nil
}

// checkContent is the mount's check of a new version of rel: validation
// against the committed version, then the secret scan. Problems name the
// line and the rule, never a secret's value.
func checkContent(rel string, data, prev []byte) []memgraph.Problem {
	var probs []memgraph.Problem
	if memgraph.IsMemoryPath(rel) || rel == memgraph.SettingsFile {
		probs = memgraph.Validate(rel, data, prev)
	}
	return append(probs, tracker.SecretProblems(rel, data, prev)...)
}

// mergeFile merges three versions as git merge-file does: the changes from
// base to other applied to cur. ok is false on a conflict.
func mergeFile(ctx context.Context, cur, base, other []byte) (merged []byte, ok bool, err error) {
	tmp, err := os.MkdirTemp("", "mindmount-revert-")
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(tmp)
	names := []string{"current", "base", "other"}
	for i, b := range [][]byte{cur, base, other} {
		if err := os.WriteFile(filepath.Join(tmp, names[i]), b, 0o600); err != nil {
			return nil, false, err
		}
	}
	cmd := exec.CommandContext(ctx, "git", "merge-file", "-p", "-q", names[0], names[1], names[2])
	cmd.Dir = tmp
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out, true, nil
	case errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128:
		return nil, false, nil // the number of conflicts
	}
	return nil, false, fmt.Errorf("git merge-file: %w", err)
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
	unchanged := false
	hash, err := s.write(v, "", func() (tracker.Edit, error) {
		if err := canChange(v, rel, tracker.MemoryFile); err != nil {
			return tracker.Edit{}, err
		}
		cur, hasCur, err := blobAt(v.r.Context(), v.rt.Dir, "HEAD", rel)
		if err != nil {
			return tracker.Edit{}, err
		}
		old, err := readWorktree(v.rt.Dir, rel)
		if err != nil {
			return tracker.Edit{}, err
		}
		m, probs := memgraph.Parse(rel, old)
		if len(probs) > 0 {
			return tracker.Edit{}, &invalidError{probs}
		}
		switch {
		case retire && !m.Active(), !retire && m.Active():
			unchanged = true
			return tracker.Edit{}, nil
		case retire:
			m.SetStatus(memgraph.StatusRetracted, m.Front.SupersededBy)
		default:
			m.SetStatus(memgraph.StatusActive, "")
		}
		data := m.Render()
		if probs := checkContent(rel, data, curOrNil(cur, hasCur)); len(probs) > 0 {
			return tracker.Edit{}, &invalidError{probs}
		}
		return apply(v.rt.Repo, []planned{{rel: rel, data: data}})
	})
	switch {
	case err != nil:
		s.failed(v, actionCode(err), err)
	case unchanged || hash == "":
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
	hash, err := s.write(v, "", func() (tracker.Edit, error) {
		if err := v.rt.Tracker.CanChange(rel, tracker.MemoryFile); err != nil {
			// Shown beside the text, like a validation problem.
			return tracker.Edit{}, &invalidError{[]memgraph.Problem{{Path: rel, Msg: err.Error(), Err: err}}}
		}
		cur, hasCur, err := blobAt(v.r.Context(), v.rt.Dir, "HEAD", rel)
		if err != nil {
			return tracker.Edit{}, err
		}
		if probs := checkContent(rel, data, curOrNil(cur, hasCur)); len(probs) > 0 {
			return tracker.Edit{}, &invalidError{probs}
		}
		return apply(v.rt.Repo, []planned{{rel: rel, data: data}})
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
