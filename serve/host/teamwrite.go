package host

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/hooks"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/proposal"
)

// TeamOp is a change a member's worker asks of its team's writer.
type TeamOp string

// The changes a team's writer takes: a file's whole new content, or its
// removal, each with the version it started from.
const (
	TeamPut    TeamOp = "put"
	TeamRemove TeamOp = "remove"
	// The proposals' review: any member lists them; a maintainer
	// approves (a merge on HEAD) or rejects (the branch deleted) one,
	// named by its branch at the tip that was shown.
	TeamList    TeamOp = "list"
	TeamApprove TeamOp = "approve"
	TeamReject  TeamOp = "reject"
)

// TeamChange is one member's change of one file of the team.
type TeamChange struct {
	Op   TeamOp `json:"op"`
	Path string `json:"path"` // repo-relative, slash-separated
	// Base is the blob id (gitrepo.BlobID) of the file as the member
	// found it, "" when it had none: a file changed since is merged.
	Base string `json:"base,omitempty"`
	Data []byte `json:"data,omitempty"` // Put's whole new content
	// Propose makes the change a proposal whatever the member's role:
	// what a member's consolidation would change in a team's memory.
	Propose bool `json:"propose,omitempty"`
	// Note says, in a proposal's message, where the change came from.
	Note string `json:"note,omitempty"`
	// Promoted marks a promotion (Put): a copy of a member's personal
	// memory, refused when the team has the path already (ErrPathTaken).
	Promoted bool `json:"promoted,omitempty"`
	// Branch and Tip name the proposal of an approval or a rejection.
	Branch string `json:"branch,omitempty"`
	Tip    string `json:"tip,omitempty"`
}

// TeamResult is what became of a change: a commit of the team's HEAD, or
// a proposal branch (Note says why: the role, or a conflict).
type TeamResult struct {
	Commit   string `json:"commit,omitempty"`
	Proposal string `json:"proposal,omitempty"`
	Note     string `json:"note,omitempty"`
	// Proposals is what List found waiting.
	Proposals []proposal.Proposal `json:"proposals,omitempty"`
}

// TeamMember is a member as the team's writer knows them: the user
// behind a uid and their role.
type TeamMember struct {
	User string
	Role team.Role
}

// TeamWriter is a team repository's one writer under serve: it takes
// members' changes (TeamChange) and hands each to the team's tracker —
// a commit authored by the member (roles write and maintain), or a
// proposal branch (propose, or a change that conflicts) — and refuses a
// reader or a stranger. Who asks is the uid the kernel reported for the
// connection, never what the request says; Members maps it from
// root-owned data.
type TeamWriter struct {
	Name    string
	Writer  tracker.Writer // the team's tracker: its gate judges every change
	Repo    *gitrepo.Repo
	Members func() (map[uint32]TeamMember, error)

	mu sync.Mutex // one change at a time: read HEAD, merge, commit
}

// errConflictNote starts a conflicting change's proposal message.
const conflictNote = "conflict: the file changed since the member read it and the memory merge could not join both"

// Do applies c for the peer uid.
func (tw *TeamWriter) Do(ctx context.Context, uid uint32, c TeamChange) (TeamResult, error) {
	ms, err := tw.Members()
	if err != nil {
		return TeamResult{}, err
	}
	m, ok := ms[uid]
	if !ok {
		return TeamResult{}, fmt.Errorf("%w %s (uid %d)", team.ErrNotMember, tw.Name, uid)
	}
	if _, err := checkedChange(c); err != nil {
		return TeamResult{}, err
	}
	switch c.Op {
	case TeamList, TeamApprove, TeamReject:
		return tw.review(ctx, m, c)
	}
	if !m.Role.Mutates() {
		return TeamResult{}, fmt.Errorf("%w: %s is %s in %s", team.ErrReadOnly, m.User, m.Role, tw.Name)
	}
	tw.mu.Lock()
	defer tw.mu.Unlock()
	head, err := tw.Repo.Head()
	if err != nil {
		return TeamResult{}, err
	}
	if c.Promoted {
		if _, had, err := tw.Repo.ReadHead(c.Path); err != nil || had {
			return TeamResult{}, errors.Join(err, fmt.Errorf("%w: %s", team.ErrPathTaken, c.Path))
		}
	}
	changes, conflict, err := tw.merge(c)
	if err != nil {
		return TeamResult{}, err
	}
	who := gitrepo.Author{Name: m.User, Email: m.User + "@" + tw.Name + ".mindmount"}
	msg := fmt.Sprintf("%s %s\n\nMindmount-User: %s\n", c.Op, c.Path, m.User)
	if c.Promoted {
		msg = fmt.Sprintf("mindmount promote: %s from %s\n\nMindmount-User: %s\n", c.Path, m.User, m.User)
	}
	if conflict || !m.Role.Commits() || c.Propose {
		note := "proposed by a member whose role is " + string(m.Role)
		if c.Propose {
			note = "proposed by " + m.User + "'s consolidation"
			msg = fmt.Sprintf("%s %s (%s)\n\n%s\nMindmount-User: %s\n", c.Op, c.Path, note, memgraph.SafeLine(c.Note), m.User)
		}
		if conflict {
			note = conflictNote
			msg = fmt.Sprintf("%s %s (%s)\n", c.Op, c.Path, conflictNote)
		}
		p, err := proposal.Propose(ctx, tw.Writer, tw.Repo, m.User, changes, msg, who)
		return TeamResult{Proposal: p.Branch, Note: note}, err
	}
	commit, err := tw.Writer.Apply(ctx, tracker.Change{Changes: changes, Message: msg, Author: who, Parents: []string{head}, Worktree: true})
	return TeamResult{Commit: commit}, err
}

// merge turns c into the change of HEAD: c itself when the file is still
// the version the member started from, else the memory merge of base,
// HEAD's version and the member's (hooks.MergeFile). conflict is set when
// no merge joins them (or the base is not known): the member's own
// version is then what a proposal carries.
func (tw *TeamWriter) merge(c TeamChange) (changes []gitrepo.Change, conflict bool, err error) {
	theirs := gitrepo.Change{Path: c.Path, Data: c.Data, Delete: c.Op == TeamRemove}
	cur, had, err := tw.Repo.ReadHead(c.Path)
	if err != nil {
		return nil, false, err
	}
	if (!had && c.Base == "") || (had && gitrepo.BlobID(cur) == c.Base) {
		return []gitrepo.Change{theirs}, false, nil
	}
	var base []byte
	if c.Base != "" {
		b, ok, err := tw.Repo.ReadBlob(c.Base)
		if err != nil || !ok {
			return []gitrepo.Change{theirs}, true, err
		}
		base = b
	}
	if !had {
		cur = nil
	}
	var data []byte
	if c.Op == TeamPut {
		data = c.Data
		if data == nil {
			data = []byte{}
		}
	}
	m, err := hooks.MergeFile(hooks.MergeInput{Path: c.Path, Base: base, Ours: cur, Theirs: data, TheirsNewer: true})
	if errors.Is(err, hooks.ErrConflict) || (err == nil && m.SiblingPath != "") {
		return []gitrepo.Change{theirs}, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	return []gitrepo.Change{{Path: c.Path, Data: m.Data, Delete: m.Deleted}}, false, nil
}

// review answers the proposals' review for member m: the list for any
// member, an approval or a rejection for a maintainer only, each through
// the team's tracker (its gate judges the merge).
func (tw *TeamWriter) review(ctx context.Context, m TeamMember, c TeamChange) (TeamResult, error) {
	if c.Op == TeamList {
		ps, err := proposal.List(tw.Repo)
		return TeamResult{Proposals: ps}, err
	}
	if !m.Role.Approves() {
		return TeamResult{}, fmt.Errorf("%w: %s is %s in %s", team.ErrNotMaintainer, m.User, m.Role, tw.Name)
	}
	tw.mu.Lock()
	defer tw.mu.Unlock()
	who := gitrepo.Author{Name: m.User, Email: m.User + "@" + tw.Name + ".mindmount"}
	if c.Op == TeamReject {
		return TeamResult{}, proposal.Reject(ctx, tw.Writer, tw.Repo, c.Branch, c.Tip, who)
	}
	hash, err := proposal.Approve(ctx, tw.Writer, tw.Repo, c.Branch, c.Tip, who)
	return TeamResult{Commit: hash}, err
}
