package tracker_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
	"github.com/mindmount/mindmount/memgraph"
)

// TestJudgeReadOnly is the commit rule for read_only files, the one the
// tracker and the pre-commit hook share: a change to, and the deletion of,
// a file that is read_only in HEAD is refused; a file that is not, or not
// yet, committed read_only is judged like any other.
func TestJudgeReadOnly(t *testing.T) {
	ro := []byte(conformance.Character)
	plain := []byte(conformance.UserFile)
	cases := []struct {
		name         string
		rel          string
		data         []byte
		exists       bool
		prev         []byte
		inHead       bool
		want         string // substring of the one problem, "" for none
		wantProblems int
	}{
		{"deleting a read_only file", "character.md", nil, false, ro, true, "its deletion is not committed", 1},
		{"changing a read_only file", "character.md", []byte(strings.Replace(conformance.Character, "concise", "verbose", 1)), true, ro, true, "the change is not committed", 1},
		{"dropping the flag", "character.md", []byte(strings.Replace(conformance.Character, "read_only: true\n", "", 1)), true, ro, true, "the change is not committed", 1},
		{"deleting a read_only memory", "user_memory/pinned.md", nil, false, []byte(strings.Replace(conformance.LikesTea, "status: active\n", "status: active\nread_only: true\n", 1)), true, "its deletion is not committed", 1},
		{"deleting a file that is not read_only", "user.md", nil, false, plain, true, "", 0},
		{"a new file that claims read_only", "character.md", ro, true, nil, false, "a new file cannot be created with read_only", 1},
		{"deleting a file HEAD never had", "character.md", nil, false, nil, false, "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ps := tracker.Judge(tc.rel, tc.data, tc.exists, tc.prev, tc.inHead)
			if len(ps) != tc.wantProblems {
				t.Fatalf("Judge = %v, want %d problems", ps, tc.wantProblems)
			}
			if tc.want != "" && (!strings.Contains(ps[0].Msg, tc.want) || ps[0].Path != tc.rel) {
				t.Fatalf("Judge = %v, want a problem of %s about %q", ps, tc.rel, tc.want)
			}
		})
	}
}

// TestReadOnlyDeletionHeld drives the tracker directly (no watcher): a
// read_only file removed from the work tree and reported by a writer
// (Touch, as the mount does, and Write, as MCP does) is not deleted in
// git; the deletion is reported in the status until the file is restored,
// and the graph keeps serving the committed file.
func TestReadOnlyDeletionHeld(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, g, _ := open(t, dir, tracker.Config{})
	ctx := context.Background()
	head := conformance.Git(t, dir, "rev-parse", "HEAD")
	p := filepath.Join(dir, "character.md")

	held := func(how string) {
		t.Helper()
		if got := conformance.Git(t, dir, "rev-parse", "HEAD"); got != head {
			t.Fatalf("%s: a commit was made:\n%s", how, conformance.Git(t, dir, "show", "--stat", "HEAD"))
		}
		if _, ok := conformance.HeadFile(t, dir, "character.md"); !ok {
			t.Fatalf("%s: the deletion of a read_only file was committed", how)
		}
		if st := string(tr.Status()); !strings.Contains(st, "character.md: read_only: true protects this file; its deletion is not committed") {
			t.Fatalf("%s: the held deletion is not reported:\n%s", how, st)
		}
		if !strings.Contains(string(g.Context(memgraph.ContextOptions{})), "concise assistant") {
			t.Fatalf("%s: the context no longer holds the committed character.md", how)
		}
	}

	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	tr.Touch("character.md", "rm")
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	held("Touch and Flush")

	who := gitrepo.Author{Name: "mcp (tester)", Email: "mcp@mindmount.local"}
	hash, err := tr.Write(ctx, who, "mcp (tester)", func() (tracker.Edit, error) {
		return tracker.Edit{Paths: []string{"character.md"}}, nil
	})
	if hash != "" {
		t.Fatalf("Write committed %s (err %v)", hash, err)
	}
	held("Write")

	// Restored: nothing left to report, nothing committed.
	conformance.Git(t, dir, "checkout", "--", "character.md")
	tr.Touch("character.md", "git")
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := string(tr.Status()); strings.Contains(st, "character.md:") {
		t.Fatalf("still reported after the restore:\n%s", st)
	}
	if got := conformance.Git(t, dir, "rev-parse", "HEAD"); got != head {
		t.Fatal("the restore made a commit")
	}
	conformance.CheckRepo(t, dir)
}
