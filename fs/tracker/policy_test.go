package tracker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
	"github.com/mindmount/mindmount/memgraph"
)

// TestCanChange is the write policy every door asks (the mount, MCP, the
// web page): each refusal is a typed error, matched with errors.Is.
func TestCanChange(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _, _ := open(t, dir, tracker.Config{})
	// A new file that claims read_only is not protected: it was never
	// committed so, and can still be fixed or removed.
	if err := os.WriteFile(filepath.Join(dir, "user_memory", "claims.md"), []byte("---\ndescription: x\nread_only: true\n---\nx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr.Touch("user_memory/claims.md", "test")
	if err := tr.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		rel    string
		scope  tracker.Scope
		change error // CanChange
		create error // CanCreate
	}{
		{".git", tracker.AnyFile, tracker.ErrGitDir, tracker.ErrGitDir},
		{".git/HEAD", tracker.MemoryFile, tracker.ErrGitDir, tracker.ErrGitDir},
		{"CONTEXT.md", tracker.AnyFile, tracker.ErrSynthesized, tracker.ErrSynthesized},
		{".mindmount/consolidate", tracker.AnyFile, tracker.ErrSynthesized, tracker.ErrSynthesized},
		{".mindmount/search/tea", tracker.AnyFile, tracker.ErrSynthesized, tracker.ErrSynthesized},
		{"character.md", tracker.AnyFile, tracker.ErrReadOnly, tracker.ErrReadOnly},
		{"character.md", tracker.MemoryFile, tracker.ErrReadOnly, tracker.ErrReadOnly},
		{"user_memory/claims.md", tracker.AnyFile, nil, nil},
		{"user_memory/likes-tea.md", tracker.MemoryFile, nil, nil},
		{"transcripts/a.jsonl", tracker.AnyFile, nil, nil},
		{"transcripts/a.md", tracker.MemoryFile, tracker.ErrInbox, tracker.ErrInbox},
		{"notes.txt", tracker.MemoryFile, tracker.ErrNotMemory, tracker.ErrNotMemory},
		{"notes.txt", tracker.AnyFile, nil, nil},
		{"user_memory/bad\nname.md", tracker.AnyFile, nil, tracker.ErrBadName},
		{"ghp_0123456789abcdefghijklmnopqrstuvwxyzAB.md", tracker.AnyFile, nil, memgraph.ErrSecretName},
	}
	for _, tc := range tests {
		if err := tr.CanChange(tc.rel, tc.scope); !is(err, tc.change) {
			t.Errorf("CanChange(%q, %v) = %v, want %v", tc.rel, tc.scope, err, tc.change)
		}
		if err := tr.CanCreate(tc.rel, tc.scope); !is(err, tc.create) {
			t.Errorf("CanCreate(%q, %v) = %v, want %v", tc.rel, tc.scope, err, tc.create)
		}
	}
}

func is(err, want error) bool {
	if want == nil {
		return err == nil
	}
	return errors.Is(err, want)
}

// TestJudgeReadOnlyIsTyped: the tracker tells a read_only refusal from
// other problems by its type (the graph keeps serving the committed
// version), never by the message's words.
func TestJudgeReadOnlyIsTyped(t *testing.T) {
	ro := []byte(conformance.Character)
	ps := tracker.Judge("character.md", []byte("changed\n"), true, ro, true)
	if len(ps) != 1 || !errors.Is(ps[0].Err, tracker.ErrReadOnly) {
		t.Fatalf("Judge = %#v, want one problem with ErrReadOnly", ps)
	}
	ps = tracker.Judge("user_memory/x.md", []byte("no frontmatter\n"), true, nil, false)
	for _, p := range ps {
		if errors.Is(p.Err, tracker.ErrReadOnly) {
			t.Fatalf("an invalid new file is reported as read_only: %v", p)
		}
	}
}

// TestSecretProblemsAreTyped: a secret held out of git is told from other
// problems by its type (the web page lists it apart), never by its words.
func TestSecretProblemsAreTyped(t *testing.T) {
	key := "ghp_" + "0123456789abcdefghijklmnopqrstuvwxyzAB"
	ps := tracker.SecretProblems("notes.md", []byte("token: "+key+"\n"), nil)
	if len(ps) == 0 || !errors.Is(ps[0].Err, tracker.ErrSecret) {
		t.Fatalf("SecretProblems = %#v, want ErrSecret", ps)
	}
	if ps := tracker.NameProblems(key + ".md"); len(ps) != 1 || !errors.Is(ps[0].Err, tracker.ErrSecret) {
		t.Fatalf("NameProblems = %#v, want ErrSecret", ps)
	}
}
