package proposal_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
	"github.com/mindmount/mindmount/serve/proposal"
)

var (
	bob   = gitrepo.Author{Name: "bob", Email: "bob@example.com"}
	carol = gitrepo.Author{Name: "carol", Email: "carol@example.com"}
	idea  = conformance.Memory("Deploys on Fridays are banned", "No Friday Deploys", "The team never deploys on a Friday.")
)

func setup(t *testing.T) (string, *gitrepo.Repo, tracker.Writer) {
	t.Helper()
	dir := conformance.NewRepo(t)
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, r, tracker.Alone{Repo: r}
}

func propose(t *testing.T, r *gitrepo.Repo, w tracker.Writer, rel, data string) proposal.Proposal {
	t.Helper()
	p, err := proposal.Propose(context.Background(), w, r, "bob", []gitrepo.Change{{Path: rel, Data: []byte(data)}}, "team: propose "+rel, bob)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func exists(dir, rel string) bool {
	_, err := os.Lstat(filepath.Join(dir, rel))
	return err == nil
}

// TestProposalInvisibleUntilApproved: a proposal is a commit on
// mindmount/proposal/bob/1 only — HEAD, the work tree and git status do
// not change — and approving it lands the file on HEAD and in the work
// tree in a merge commit authored by bob, the branch gone.
func TestProposalInvisibleUntilApproved(t *testing.T) {
	dir, r, w := setup(t)
	head := conformance.Git(t, dir, "rev-parse", "HEAD")
	p := propose(t, r, w, "user_memory/no-friday-deploys.md", idea)
	if p.Branch != "mindmount/proposal/bob/1" || p.Base != head {
		t.Fatalf("proposal %+v", p)
	}
	if got := conformance.Git(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatal("HEAD moved on a proposal")
	}
	if _, ok := conformance.HeadFile(t, dir, "user_memory/no-friday-deploys.md"); ok || exists(dir, "user_memory/no-friday-deploys.md") {
		t.Fatal("the proposed memory is visible on the team's HEAD or work tree")
	}
	if st := conformance.Git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("git status after a proposal: %s", st)
	}
	ps, err := proposal.List(r)
	if err != nil || len(ps) != 1 || len(ps[0].Paths) != 1 || ps[0].Author != bob {
		t.Fatalf("List: %+v, %v", ps, err)
	}
	if _, err := proposal.Approve(context.Background(), w, r, p.Branch, "0000000", carol); !errors.Is(err, proposal.ErrMoved) {
		t.Fatalf("approve at a tip that was never shown: %v, want ErrMoved", err)
	}
	m, err := proposal.Approve(context.Background(), w, r, p.Branch, p.Tip[:7], carol)
	if err != nil {
		t.Fatal(err)
	}
	if got := conformance.Git(t, dir, "log", "-1", "--format=%an <%ae>|%P", m); got != "bob <bob@example.com>|"+head+" "+p.Tip {
		t.Fatalf("merge commit: %s", got)
	}
	if got, _ := conformance.HeadFile(t, dir, "user_memory/no-friday-deploys.md"); got != strings.TrimSpace(idea) {
		t.Fatalf("HEAD's file after approval: %q", got)
	}
	if got := conformance.ReadFile(t, dir, "user_memory/no-friday-deploys.md"); got != idea {
		t.Fatalf("work tree after approval: %q", got)
	}
	if got := conformance.Git(t, dir, "branch", "--list", "mindmount/proposal/*"); got != "" {
		t.Fatalf("branch stays after approval: %s", got)
	}
	conformance.CheckRepo(t, dir)
}

// TestRejectLeavesNothing: a rejected proposal leaves no branch, no
// commit on HEAD and no file; the next proposal of the same member takes
// the next free number only while one waits.
func TestRejectLeavesNothing(t *testing.T) {
	dir, r, w := setup(t)
	head := conformance.Git(t, dir, "rev-parse", "HEAD")
	p1 := propose(t, r, w, "user_memory/a.md", idea)
	p2 := propose(t, r, w, "user_memory/b.md", idea)
	if p2.Branch != "mindmount/proposal/bob/2" {
		t.Fatalf("second proposal %s", p2.Branch)
	}
	for _, p := range []proposal.Proposal{p1, p2} {
		if err := proposal.Reject(context.Background(), w, r, p.Branch, p.Tip, carol); err != nil {
			t.Fatal(err)
		}
	}
	if got := conformance.Git(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatal("HEAD moved on a rejection")
	}
	if got := conformance.Git(t, dir, "branch", "--list", "mindmount/proposal/*"); got != "" {
		t.Fatalf("branches stay after rejection: %s", got)
	}
	if exists(dir, "user_memory/a.md") || exists(dir, "user_memory/b.md") {
		t.Fatal("a rejected file is in the work tree")
	}
	if ps, _ := proposal.List(r); len(ps) != 0 {
		t.Fatalf("List after rejection: %+v", ps)
	}
	conformance.CheckRepo(t, dir)
}

// TestApproveMemoryMerge: the team changed a memory's fact while a
// proposal added an episode line to it: approval keeps both (the memory
// merge), never the proposal's copy over the team's.
func TestApproveMemoryMerge(t *testing.T) {
	dir, r, w := setup(t)
	rel := "user_memory/likes-tea.md"
	proposed := strings.Replace(conformance.LikesTea, "mentioned in passing.", "mentioned in passing.\nSession 02.09.26 — asked for matcha.", 1)
	p := propose(t, r, w, rel, proposed)
	teams := strings.Replace(conformance.LikesTea, "green tea in the afternoon.\n", "green tea in the afternoon, never after six.\n", 1)
	if _, err := w.Apply(context.Background(), tracker.Change{Changes: []gitrepo.Change{{Path: rel, Data: []byte(teams)}}, Message: "team edit", Author: carol, Worktree: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := proposal.Approve(context.Background(), w, r, p.Branch, p.Tip, carol); err != nil {
		t.Fatal(err)
	}
	got, _ := conformance.HeadFile(t, dir, rel)
	if !strings.Contains(got, "never after six") || !strings.Contains(got, "asked for matcha") {
		t.Fatalf("merged memory lost a side:\n%s", got)
	}
	conformance.CheckRepo(t, dir)
}

// TestProposalGoesThroughTheGate: a proposal the gate refuses (a path out
// of the repository, a file in .git) makes no branch.
func TestProposalGoesThroughTheGate(t *testing.T) {
	_, r, w := setup(t)
	for _, rel := range []string{"../escape.md", ".git/hooks/post-commit", "character.md"} {
		_, err := proposal.Propose(context.Background(), w, r, "bob", []gitrepo.Change{{Path: rel, Data: []byte(idea)}}, "bad", bob)
		if err == nil {
			t.Errorf("proposal of %s was taken", rel)
		}
	}
	if brs, _ := r.Branches(proposal.Prefix); len(brs) != 0 {
		t.Fatalf("a refused proposal left branches %v", brs)
	}
}
