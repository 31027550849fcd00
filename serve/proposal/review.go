package proposal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/hooks"
)

// ErrConflict: a file that is not a memory was changed both by the
// proposal and on the team's HEAD since; nothing is merged.
var ErrConflict = errors.New("the proposal and the team both changed a file that is not a memory")

// Approve merges the proposal branch, which must still be at tip (a
// prefix of its hash, as shown), into r's HEAD through w: one merge
// commit whose parents are HEAD and the proposal, authored by the
// proposer, naming the reviewer in a trailer; a file both sides changed
// goes through the memory merge. Then the branch is deleted.
func Approve(ctx context.Context, w tracker.Writer, r *gitrepo.Repo, branch, tip string, reviewer gitrepo.Author) (string, error) {
	p, err := Find(r, branch)
	if err != nil {
		return "", err
	}
	if tip == "" || !strings.HasPrefix(p.Tip, tip) {
		return "", fmt.Errorf("%w: %s is at %s", ErrMoved, branch, gitrepo.ShortHash(p.Tip))
	}
	head, err := r.Head()
	if err != nil {
		return "", err
	}
	changes, err := mergeChanges(r, p, head)
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("team: approve %s\n\nMindmount-User: %s\nMindmount-Approved: %s\nMindmount-Reviewer: %s\n", branch, p.User, branch, reviewer.Name)
	hash, err := w.Apply(ctx, tracker.Change{Parents: []string{head, p.Tip}, Changes: changes, Message: msg, Author: p.Author, Worktree: true, Clean: true})
	if err != nil {
		return "", err
	}
	if _, err := w.Apply(ctx, tracker.Change{Branch: branch, DeleteBranch: true, Parents: []string{p.Tip}, Author: reviewer}); err != nil {
		return hash, fmt.Errorf("merged as %s, but the branch %s stays: %w", gitrepo.ShortHash(hash), branch, err)
	}
	return hash, nil
}

// mergeChanges turns HEAD's tree into the merge of HEAD and proposal p:
// each path merges by hooks.MergeFile's rule (a memory both changed keeps
// the proposal's version in place on a real conflict, HEAD's retired
// beside it); a file no rule merges is ErrConflict.
func mergeChanges(r *gitrepo.Repo, p Proposal, head string) ([]gitrepo.Change, error) {
	var out []gitrepo.Change
	for _, path := range p.Paths {
		base, bok, err := r.ReadAt(p.Base, path)
		if err != nil {
			return nil, err
		}
		ours, ook, err := r.ReadAt(head, path)
		if err != nil {
			return nil, err
		}
		theirs, tok, err := r.ReadAt(p.Tip, path)
		if err != nil {
			return nil, err
		}
		if ook == tok && bytes.Equal(ours, theirs) {
			continue // the same on both sides
		}
		m, err := hooks.MergeFile(hooks.MergeInput{Path: path, Base: nilIf(base, bok), Ours: nilIf(ours, ook), Theirs: nilIf(theirs, tok), TheirsNewer: true,
			Taken: func(rel string) bool { _, ok, _ := r.ReadAt(head, rel); return ok }})
		switch {
		case errors.Is(err, hooks.ErrConflict):
			return nil, fmt.Errorf("%w: %s", ErrConflict, path)
		case err != nil:
			return nil, err
		}
		out = append(out, gitrepo.Change{Path: path, Data: m.Data, Delete: m.Deleted})
		if m.SiblingPath != "" {
			out = append(out, gitrepo.Change{Path: m.SiblingPath, Data: m.Sibling})
		}
	}
	return out, nil
}

// nilIf is b, or nil for a missing file.
func nilIf(b []byte, ok bool) []byte {
	if !ok {
		return nil
	}
	return b
}

// Reject deletes the proposal branch (which must still be at tip): the
// team's history keeps nothing of it.
func Reject(ctx context.Context, w tracker.Writer, r *gitrepo.Repo, branch, tip string, reviewer gitrepo.Author) error {
	p, err := Find(r, branch)
	if err != nil {
		return err
	}
	if tip == "" || !strings.HasPrefix(p.Tip, tip) {
		return fmt.Errorf("%w: %s is at %s", ErrMoved, branch, gitrepo.ShortHash(p.Tip))
	}
	_, err = w.Apply(ctx, tracker.Change{Branch: branch, DeleteBranch: true, Parents: []string{p.Tip}, Author: reviewer})
	return err
}
