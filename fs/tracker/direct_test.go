package tracker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
)

// TestWriteCommitsOnlyItsPaths: Write commits what its function wrote as
// one commit by the given author at once, leaves another writer's pending
// change for that writer's own commit, and commits nothing when the
// function refuses.
func TestWriteCommitsOnlyItsPaths(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, g := watch(t, dir, tracker.Config{Debounce: time.Hour, MaxWait: time.Hour, User: "ada"})
	before := commitCount(t, dir)
	// A mount writer's change, pending behind a long debounce.
	conformance.WriteFile(t, dir, "user_memory/agent-note.md", conformance.Memory("Agent", "From the agent", "Agent."))
	tr.Touch("user_memory/agent-note.md", "sh")

	tr.NoteSandbox("bwrap[42]") // the agent's sandbox: not ours to name
	who := gitrepo.Author{Name: "mcp (tester)", Email: "mcp@mindmount.local"}
	ctx := context.Background()
	hash, err := tr.Write(ctx, who, "mcp (tester)", func() (tracker.Edit, error) {
		conformance.WriteFile(t, dir, "user_memory/direct.md", conformance.Memory("Direct", "Written directly", "Direct."))
		return tracker.Edit{Paths: []string{"user_memory/direct.md"}}, nil
	})
	if err != nil || hash == "" {
		t.Fatalf("Write = %q, %v", hash, err)
	}
	if got := sh(t, dir, "git log -1 --format='%an|%s' --name-only"); got != "mcp (tester)|mcp (tester): add user_memory/direct.md\n\nuser_memory/direct.md" {
		t.Errorf("commit:\n%s", got)
	}
	if got := sh(t, dir, "git log -1 --format=%B"); !strings.HasSuffix(got, "\n\nMindmount-User: ada") {
		t.Errorf("message lacks the user trailer or names a sandbox:\n%s", got)
	}
	if g.Get("user_memory/direct.md") == nil {
		t.Error("the graph does not serve the new memory")
	}
	if !slices.Contains(tr.Pending(), "user_memory/agent-note.md") {
		t.Errorf("the agent's change is no longer pending: %v", tr.Pending())
	}

	refused := errors.New("refused")
	if _, err := tr.Write(ctx, who, "mcp (tester)", func() (tracker.Edit, error) { return tracker.Edit{}, refused }); !errors.Is(err, refused) {
		t.Errorf("Write with a refusing function = %v", err)
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := commitCount(t, dir); got != before+2 {
		t.Errorf("%d commits, want %d (ours, then the agent's)", got, before+2)
	}
	if got := sh(t, dir, "git log -1 --format=%an"); got != "agent" {
		t.Errorf("the agent's change was committed by %q", got)
	}
}

// TestWriteWaitsForGit refuses while a git command holds the repository.
func TestWriteWaitsForGit(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _, _ := open(t, dir, tracker.Config{})
	lock := filepath.Join(dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	called := false
	_, err := tr.Write(context.Background(), gitrepo.Author{Name: "mcp", Email: "mcp@mindmount.local"}, "mcp", func() (tracker.Edit, error) {
		called = true
		return tracker.Edit{}, nil
	})
	if !errors.Is(err, tracker.ErrGitBusy) || called || !strings.Contains(err.Error(), "index.lock") {
		t.Errorf("Write during a git command: called %v, err %v", called, err)
	}
}

// TestApplyWaitsForGit: a prepared change of HEAD's branch (a consolidation's
// merge, a sync merge, a web page action) is refused while a person's git
// merge is in progress, and HEAD stays; a dream's commit on its own branch
// is not held up by it.
func TestApplyWaitsForGit(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _, r := open(t, dir, tracker.Config{})
	head, _ := r.Head()
	if err := os.WriteFile(filepath.Join(dir, ".git", "MERGE_HEAD"), []byte(head+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ch := []gitrepo.Change{{Path: "user_memory/during-merge.md", Data: []byte(conformance.Memory("During", "During", "You merged."))}}
	_, err := tr.Apply(context.Background(), tracker.Change{Changes: ch, Message: "consolidate: during", Author: gitrepo.Writer("consolidator")})
	if !errors.Is(err, tracker.ErrGitBusy) {
		t.Errorf("Apply during a git merge: %v, want ErrGitBusy", err)
	}
	if now, _ := r.Head(); now != head {
		t.Errorf("HEAD moved during a git merge: %s -> %s", head, now)
	}
	if _, err := tr.Apply(context.Background(), tracker.Change{Branch: "mindmount/dream/1", Parents: []string{head}, Changes: ch, Message: "dream", Author: gitrepo.Writer("consolidator")}); err != nil {
		t.Errorf("a dream's branch commit during a git merge: %v", err)
	}
}
