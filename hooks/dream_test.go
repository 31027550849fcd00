package hooks

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// The dream's merge with the real drivers (consolidate/dream.go wires
// them through Config.MergeFile): tested here, because consolidate may
// not import hooks.

type dreamEnv struct {
	t   *testing.T
	dir string
	r   *gitrepo.Repo
	tr  *tracker.Tracker
	srv *llmtest.Server
	c   *consolidate.Consolidator
}

var agent = gitrepo.Writer("agent")

func newDreamEnv(t *testing.T, files map[string]string) *dreamEnv {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := t.TempDir()
	r, err := gitrepo.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	files["user.md"] = "---\ndescription: Who the user is\n---\n# User\n"
	files[".gitignore"] = "/transcripts/*\n"
	var changes []gitrepo.Change
	for rel, data := range files {
		changes = append(changes, gitrepo.Change{Path: rel, Data: []byte(data)})
	}
	if _, err := r.Apply(changes, "init", agent, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	g, err := memgraph.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e := &dreamEnv{t: t, dir: dir, r: r, srv: llmtest.New(t)}
	e.tr = tracker.New(g, r, tracker.Config{Logger: log})
	e.c = consolidate.New(e.tr, llm.NewOllama(e.srv.OllamaURL(), "fake-model"), consolidate.Config{Logger: log, MergeFile: DreamMerger})
	return e
}

func (e *dreamEnv) write(rel, data string) {
	e.t.Helper()
	p := filepath.Join(e.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *dreamEnv) read(rel string) string {
	b, _ := os.ReadFile(filepath.Join(e.dir, filepath.FromSlash(rel)))
	return string(b)
}

// agentWrites commits a file as the agent would, through the tracker.
func (e *dreamEnv) agentWrites(rel, data string) {
	e.t.Helper()
	if _, err := e.tr.Apply(context.Background(), tracker.Change{Changes: []gitrepo.Change{{Path: rel, Data: []byte(data)}},
		Message: "agent: " + rel, Author: agent, Worktree: true}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *dreamEnv) git(args ...string) string {
	e.t.Helper()
	out, err := exec.Command("git", append([]string{"-C", e.dir}, args...)...).CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (e *dreamEnv) cursorAtHead(rel string) int {
	e.t.Helper()
	data, _, err := e.r.ReadHead(consolidate.CursorFile)
	if err != nil {
		e.t.Fatal(err)
	}
	c, err := consolidate.ParseCursor(data)
	if err != nil {
		e.t.Fatal(err)
	}
	return c.Transcripts[rel].Messages
}

func dreamMemory(desc, fact string) string {
	return "---\ndescription: " + desc + "\nstatus: active\n---\n# " + desc + "\n\n## Fact\n" + fact + "\n\n## Access log\nused, 01.11.26\n"
}

// script answers the extraction with facts and the decision with decs;
// during runs the agent's edit happens (before the dream commits).
func (e *dreamEnv) script(facts []consolidate.Fact, decs []consolidate.Decision, during func()) {
	e.srv.Handle(func(c llmtest.Call) llmtest.Reply {
		if c.Kind == llmtest.KindExtract {
			return llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": facts})}
		}
		if during != nil {
			during()
		}
		return llmtest.Reply{Content: llmtest.JSON(map[string]any{"decisions": decs})}
	})
}

// TestDreamConflictKeepsBoth: the dream refines a memory the agent edits
// while the model thinks. The merge is a real two-parent commit; the
// agent's version stays in place, the dream's is retired beside it
// (superseded, linked); no conflict marker anywhere, no line lost, the
// access logs united, and the cursor advanced in main.
func TestDreamConflictKeepsBoth(t *testing.T) {
	e := newDreamEnv(t, map[string]string{"user_memory/likes-tea.md": dreamMemory("Likes tea", "You like tea.")})
	e.write("transcripts/s.jsonl", `{"role":"user","content":"I like green tea most."}`+"\n")
	agentVersion := strings.Replace(dreamMemory("Likes tea", "You like tea, black, no sugar."), "used, 01.11.26\n", "used, 01.11.26\nused, 02.11.26\n", 1)
	e.script([]consolidate.Fact{{Kind: "user", Slug: "likes-green-tea", Description: "Likes green tea most", Fact: "You like green tea most."}},
		[]consolidate.Decision{{Fact: 0, Action: consolidate.ActionUpdate, Target: "user_memory/likes-tea", Description: "Likes green tea most", Text: "You like green tea most."}},
		func() { e.agentWrites("user_memory/likes-tea.md", agentVersion) })
	rep, err := e.c.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Merges) != 1 {
		t.Fatalf("merges %v", rep.Merges)
	}
	parents := strings.Fields(e.git("log", "-1", "--format=%P"))
	if len(parents) != 2 {
		t.Fatalf("HEAD is not a merge: parents %v", parents)
	}
	kept := e.read("user_memory/likes-tea.md")
	if !strings.Contains(kept, "black, no sugar") || !strings.Contains(kept, "used, 02.11.26") {
		t.Fatalf("the agent's version is not in place:\n%s", kept)
	}
	msg := e.git("log", "-1", "--format=%B")
	var sibling string
	for _, l := range strings.Split(msg, "\n") {
		if strings.HasPrefix(l, "  user_memory/") {
			sibling = strings.TrimSpace(l)
		}
	}
	if sibling == "" {
		t.Fatalf("the merge names no retired sibling:\n%s", msg)
	}
	sib := e.read(sibling)
	if !strings.Contains(sib, "You like green tea most.") || !strings.Contains(sib, "status: superseded") {
		t.Fatalf("the dream's version is not kept retired beside:\n%s", sib)
	}
	for _, rel := range []string{"user_memory/likes-tea.md", sibling} {
		if c := e.read(rel); strings.Contains(c, "<<<<<<<") || strings.Contains(c, ">>>>>>>") {
			t.Fatalf("conflict markers in %s", rel)
		}
	}
	if n := e.cursorAtHead("transcripts/s.jsonl"); n != 1 {
		t.Fatalf("cursor at %d, want 1", n)
	}
	if st := e.git("status", "--porcelain", "--", "user_memory"); strings.TrimSpace(st) != "" {
		t.Fatalf("work tree not clean:\n%s", st)
	}
}

// TestDreamConflictAbortsAndRetries: an uncommitted edit of the memory the
// dream changes (held back: invalid) is in the way. The merge aborts: HEAD
// and the work tree unchanged, the branch kept, the cursor where it was,
// the status says so; once the edit is fixed, the next run retries the
// same transcript and merges.
func TestDreamConflictAbortsAndRetries(t *testing.T) {
	e := newDreamEnv(t, map[string]string{"user_memory/likes-tea.md": dreamMemory("Likes tea", "You like tea.")})
	e.write("transcripts/s.jsonl", `{"role":"user","content":"I like green tea most."}`+"\n")
	broken := "---\ndescription: Likes tea\nstatus: maybe\n---\n# Likes tea\n\n## Fact\nYou like tea, and a half-written line\n"
	facts := []consolidate.Fact{{Kind: "user", Slug: "likes-green-tea", Description: "Likes green tea most", Fact: "You like green tea most."}}
	decs := []consolidate.Decision{{Fact: 0, Action: consolidate.ActionUpdate, Target: "user_memory/likes-tea", Text: "You like green tea most."}}
	e.script(facts, decs, func() { e.write("user_memory/likes-tea.md", broken) })
	head := e.git("rev-parse", "HEAD")
	_, err := e.c.Run(context.Background())
	if !errors.Is(err, consolidate.ErrDreamConflict) {
		t.Fatalf("err = %v, want ErrDreamConflict", err)
	}
	if e.git("rev-parse", "HEAD") != head || e.read("user_memory/likes-tea.md") != broken {
		t.Fatal("an aborted merge changed HEAD or the work tree")
	}
	if e.cursorAtHead("transcripts/s.jsonl") != 0 {
		t.Fatal("the cursor moved past a dream that was not merged")
	}
	if !strings.Contains(e.git("branch", "--list", "mindmount/dream/*"), "mindmount/dream/1") {
		t.Fatal("the dream's branch is gone")
	}
	ds, err := e.c.Dreams()
	if err != nil || len(ds) != 1 || ds[0].N != 1 {
		t.Fatalf("review lists %v %v", ds, err)
	}
	// Fixed: the next run retries the same message, on a new dream.
	e.write("user_memory/likes-tea.md", dreamMemory("Likes tea", "You like tea."))
	e.script(facts, decs, nil)
	rep, err := e.c.Run(context.Background())
	if err != nil || len(rep.Merges) != 1 || rep.Messages != 1 {
		t.Fatalf("retry: %+v %v", rep, err)
	}
	if e.cursorAtHead("transcripts/s.jsonl") != 1 || !strings.Contains(e.read("user_memory/likes-tea.md"), "green tea most") {
		t.Fatal("the retry did not merge")
	}
	if ds, _ := e.c.Dreams(); len(ds) != 0 {
		t.Fatalf("the redone dream is still listed: %v", ds)
	}
}
