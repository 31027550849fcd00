// Package proposal is a team member's proposed change: one commit on a
// branch mindmount/proposal/<user>/<n> started from the team's HEAD, that
// leaves the team's HEAD, index and work tree alone until a maintainer
// approves it (a merge commit on HEAD, the memory merge where both sides
// changed a file) or rejects it (the branch is deleted). Every commit and
// deletion goes through a tracker.Writer, so the tracker's gate judges it.
package proposal

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph/team"
)

// Prefix starts every proposal branch's name.
const Prefix = "mindmount/proposal/"

// Errors a caller may tell apart.
var (
	ErrNoProposal = errors.New("no such proposal")
	ErrEmpty      = errors.New("the proposal changes nothing")
	// ErrMoved: the proposal branch is not at the commit that was shown.
	ErrMoved = errors.New("the proposal moved since it was shown")
)

// Proposal is one waiting proposal branch.
type Proposal struct {
	Branch string // mindmount/proposal/<user>/<n>
	User   string
	N      int
	Tip    string         // the proposal's commit
	Base   string         // the team HEAD it started from (Tip's parent)
	Author gitrepo.Author // who proposed it
	Paths  []string       // the files it changes
}

// Branch names user's proposal n.
func Branch(user string, n int) string { return Prefix + user + "/" + strconv.Itoa(n) }

// parse splits a branch name into its user and number.
func parse(branch string) (user string, n int, ok bool) {
	rest, ok := strings.CutPrefix(branch, Prefix)
	if !ok {
		return "", 0, false
	}
	user, num, ok := strings.Cut(rest, "/")
	if !ok || team.ValidName(user) != nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 || strconv.Itoa(n) != num {
		return "", 0, false
	}
	return user, n, true
}

// Propose records changes as user's next proposal, a commit on a new
// branch from r's HEAD authored by who, through w (the gate judges it).
// The team's HEAD and work tree do not change.
func Propose(ctx context.Context, w tracker.Writer, r *gitrepo.Repo, user string, changes []gitrepo.Change, msg string, who gitrepo.Author) (Proposal, error) {
	if err := team.ValidName(user); err != nil {
		return Proposal{}, err
	}
	if len(changes) == 0 {
		return Proposal{}, ErrEmpty
	}
	head, err := r.Head()
	if err != nil {
		return Proposal{}, err
	}
	have, err := r.Branches(Prefix + user + "/")
	if err != nil {
		return Proposal{}, err
	}
	n := 1
	for b := range have {
		if _, k, ok := parse(b); ok && k >= n {
			n = k + 1
		}
	}
	br := Branch(user, n)
	msg = strings.TrimRight(msg, "\n") + "\n\nMindmount-User: " + user + "\nMindmount-Proposal: " + br + "\n"
	tip, err := w.Apply(ctx, tracker.Change{Branch: br, Parents: []string{head}, Changes: changes, Message: msg, Author: who})
	if err != nil {
		return Proposal{}, err
	}
	if tip == "" {
		return Proposal{}, ErrEmpty
	}
	return Proposal{Branch: br, User: user, N: n, Tip: tip, Base: head, Author: who}, nil
}

// List returns the waiting proposals of r, by user then number; a
// branch HEAD already contains (approved, fetched again) is not one.
func List(r *gitrepo.Repo) ([]Proposal, error) {
	brs, err := r.Branches(Prefix)
	if err != nil {
		return nil, err
	}
	g, err := git.PlainOpen(r.Dir())
	if err != nil {
		return nil, err
	}
	head, err := r.Head()
	if err != nil {
		return nil, err
	}
	hc, err := g.CommitObject(plumbing.NewHash(head))
	if err != nil {
		return nil, err
	}
	var out []Proposal
	for b, tip := range brs {
		user, n, ok := parse(b)
		if !ok {
			continue
		}
		c, err := g.CommitObject(plumbing.NewHash(tip))
		if err != nil {
			return nil, err
		}
		if merged, err := c.IsAncestor(hc); err != nil || merged {
			if err != nil {
				return nil, err
			}
			continue // approved already (fetched again from the team's remote)
		}
		p := Proposal{Branch: b, User: user, N: n, Tip: tip, Author: gitrepo.Author{Name: c.Author.Name, Email: c.Author.Email}}
		if len(c.ParentHashes) > 0 {
			p.Base = c.ParentHashes[0].String()
		}
		if p.Paths, err = r.Changed(p.Base, tip); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].User != out[j].User {
			return out[i].User < out[j].User
		}
		return out[i].N < out[j].N
	})
	return out, nil
}

// Find returns the waiting proposal named branch.
func Find(r *gitrepo.Repo, branch string) (Proposal, error) {
	ps, err := List(r)
	if err != nil {
		return Proposal{}, err
	}
	for _, p := range ps {
		if p.Branch == branch {
			return p, nil
		}
	}
	return Proposal{}, fmt.Errorf("%w: %s", ErrNoProposal, branch)
}
