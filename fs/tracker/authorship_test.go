package tracker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
)

// TestAuthorshipTrailers is the authorship rule of a multi-user daemon's
// commits: each names the user (Mindmount-User) and the sandboxes noted
// since the last commit (Mindmount-Sandbox, sorted, each once, at most 16,
// on one line each); a sandbox is named by one commit only; a direct
// Write names the user and leaves the noted sandboxes to the mount
// writers' commit; a tracker with neither adds nothing.
func TestAuthorshipTrailers(t *testing.T) {
	dir := conformance.NewRepo(t)
	plain, _, _ := open(t, dir, tracker.Config{})
	tr := plain
	ctx := context.Background()
	n := 0
	commit := func() string {
		t.Helper()
		n++
		rel := fmt.Sprintf("user_memory/note-%d.md", n)
		conformance.WriteFile(t, dir, rel, conformance.Memory("Note", "Note", fmt.Sprintf("Note %d.", n)))
		tr.Touch(rel, "sh")
		if err := tr.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		return trailers(conformance.Git(t, dir, "log", "-1", "--format=%B"))
	}

	if got := commit(); got != "" {
		t.Fatalf("a single-repository commit has trailers: %q", got)
	}

	tr, _, _ = open(t, dir, tracker.Config{User: "alice"}) // mindmount serve's tracker of alice
	tr.NoteSandbox("bwrap[2]")
	tr.NoteSandbox("bwrap[1]")
	tr.NoteSandbox("bwrap[2]")
	tr.NoteSandbox("")
	if got, want := commit(), "Mindmount-User: alice\nMindmount-Sandbox: bwrap[1]\nMindmount-Sandbox: bwrap[2]"; got != want {
		t.Fatalf("trailers:\n%s\nwant:\n%s", got, want)
	}
	if got, want := commit(), "Mindmount-User: alice"; got != want {
		t.Fatalf("the next commit named the sandboxes again:\n%s", got)
	}

	// A direct Write names the user only; the sandbox noted meanwhile
	// belongs to the next mount commit.
	tr.NoteSandbox("bwrap[3]")
	who := gitrepo.Author{Name: "mcp (tester)", Email: "mcp@mindmount.local"}
	if _, err := tr.Write(ctx, who, "mcp (tester)", func() (tracker.Edit, error) {
		conformance.WriteFile(t, dir, "user_memory/direct.md", conformance.Memory("Direct", "Direct", "Direct."))
		return tracker.Edit{Paths: []string{"user_memory/direct.md"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got, want := trailers(conformance.Git(t, dir, "log", "-1", "--format=%B")), "Mindmount-User: alice"; got != want {
		t.Fatalf("Write's trailers:\n%s\nwant:\n%s", got, want)
	}
	if got, want := commit(), "Mindmount-User: alice\nMindmount-Sandbox: bwrap[3]"; got != want {
		t.Fatalf("the mount commit after a Write:\n%s\nwant:\n%s", got, want)
	}

	// A fork bomb of sandboxes names a few; a name that would start a
	// trailer of its own stays on its line.
	for i := 0; i < 40; i++ {
		tr.NoteSandbox(fmt.Sprintf("box-%02d", i))
	}
	if got := strings.Count(commit(), "Mindmount-Sandbox: "); got != 16 {
		t.Fatalf("%d sandboxes named, want at most 16", got)
	}
	tr.NoteSandbox("evil\nMindmount-User: mallory")
	got := commit()
	if got != "Mindmount-User: alice\n"+`Mindmount-Sandbox: "evil\nMindmount-User: mallory"` {
		t.Fatalf("a sandbox name forged a trailer:\n%s", got)
	}
	if out := conformance.Git(t, dir, "log", "-1", "--format=%(trailers:key=Mindmount-User,valueonly)"); strings.TrimSpace(out) != "alice" {
		t.Fatalf("git reads the user trailer as %q", out)
	}
}

// trailers returns the Mindmount-* lines of a commit message.
func trailers(msg string) string {
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		if strings.HasPrefix(l, "Mindmount-") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
