package mount

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/proposal"
)

// TestProposeRoleThroughTheMount: for a proposer shared/<team>/ refuses
// every write (EROFS: a write never lands on the team's branch); a
// proposal committed beside the mount through the team's tracker is a
// branch only — not on HEAD, not in the work tree, not under shared/eng
// — until a maintainer approves it through the same tracker; then it
// reads through the mount, the proposer its author.
func TestProposeRoleThroughTheMount(t *testing.T) {
	requireFUSE(t)
	eng := newRepo(t, map[string]string{"user_memory/eng-fact.md": memoryFile("Eng Fact", "Deploys on Tuesdays", "The team deploys on Tuesdays.")})
	engTr, engLs := teamTracker(t, eng, "bob")
	tm := mountRepo(t, newRepo(t, nil), Options{Teams: []Team{{Name: "eng", Role: team.Propose, Tracker: engTr, Listeners: engLs}}})
	head := git(t, eng, "rev-parse", "HEAD")
	rel := "user_memory/no-friday.md"
	if err := os.WriteFile(tm.p("shared/eng/"+rel), []byte("x"), 0o644); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("a proposer's create: %v, want EROFS", err)
	}
	if err := appendLine(tm.p("shared/eng/user_memory/eng-fact.md"), "more"); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("a proposer's append: %v, want EROFS", err)
	}
	r, err := gitrepo.Open(eng)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mem := memoryFile("No Friday", "No Friday deploys", "The team never deploys on a Friday.")
	bob := gitrepo.Author{Name: "bob", Email: "bob@example.com"}
	p, err := proposal.Propose(ctx, engTr, r, "bob", []gitrepo.Change{{Path: rel, Data: []byte(mem)}}, "no Friday deploys", bob)
	if err != nil {
		t.Fatal(err)
	}
	if got := git(t, eng, "rev-parse", "HEAD"); got != head {
		t.Fatalf("HEAD moved on a proposal: %s -> %s", head, got)
	}
	if st := git(t, eng, "status", "--porcelain"); st != "" {
		t.Fatalf("the team's tree changed:\n%s", st)
	}
	if _, err := os.Stat(tm.p("shared/eng/" + rel)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the proposal is visible under shared/eng: %v", err)
	}
	if _, err := proposal.Approve(ctx, engTr, r, p.Branch, p.Tip, gitrepo.Author{Name: "carol", Email: "carol@example.com"}); err != nil {
		t.Fatal(err)
	}
	if got := git(t, eng, "log", "-1", "--format=%an|%P"); got != "bob|"+head+" "+p.Tip {
		t.Fatalf("approval commit %q", got)
	}
	var got string
	for end := time.Now().Add(60 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(tm.p("shared/eng/" + rel)); err == nil {
			got = string(b)
			break
		}
	}
	if !strings.Contains(got, "never deploys on a Friday") {
		t.Fatalf("the approved memory does not read through the mount: %q", got)
	}
}
