package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/memgraph/secret/secrettest"
)

// TestMountConsolidatesWhenIdle is the idle trigger end to end through a
// real mount: the built binary mounts a repository with a fake Ollama
// behind it, a JSONL transcript is written through the mount, the
// transcripts go quiet, and the new memory shows in the mount's
// user_memory.md, in one consolidation commit that also moves the cursor.
func TestMountConsolidatesWhenIdle(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			t.Skip("not root and no fusermount3")
		}
	}
	srv := llmtest.New(t)
	srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: `{"facts":[{"kind":"user","slug":"has-cat-miso","description":"Has a grey cat called Miso","fact":"You have a grey cat called Miso.","episode":"You mentioned Miso while planning a trip."}]}`})
	srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})

	repo, mnt, cmd, logs := mountWithFakeModel(t, srv, "500ms")

	transcript := `{"role":"system","content":"You are helpful."}
{"role":"user","content":"Can you help me plan a weekend trip? My grey cat Miso needs a sitter."}
{"role":"assistant","content":[{"type":"text","text":"Sure - let's find a sitter for Miso first."}]}
`
	if err := os.WriteFile(filepath.Join(mnt, "transcripts", "s1.jsonl"), []byte(transcript), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(mnt, "user_memory.md"))
		return strings.Contains(string(b), "user_memory/has-cat-miso.md")
	}, "consolidated memory in the mount's user_memory.md")

	stopMindmount(t, cmd, logs)
	authors := gitOut(t, repo, "log", "--format=%an")
	// The dream's commit and its merge.
	if n := strings.Count(authors, "consolidator"); n != 2 {
		t.Fatalf("%d consolidation commits, want 2; authors:\n%s\nlogs:\n%s", n, authors, logs.String())
	}
	commit := gitOut(t, repo, "log", "--author=consolidator", "--no-merges", "--format=%s%n%b", "--name-only")
	for _, want := range []string{"consolidate transcripts/s1.jsonl#", "1 added", "user_memory/has-cat-miso.md", ".mindmount/cursor.json", "Mindmount-Model:"} {
		if !strings.Contains(commit, want) {
			t.Errorf("consolidation commit lacks %q:\n%s", want, commit)
		}
	}
	// The model saw the user's words, and never the system prompt of the
	// transcript as a fact source.
	ex := srv.CallsOf(llmtest.KindExtract)
	if len(ex) != 1 || !strings.Contains(ex[0].Prompt, "Miso") || strings.Contains(ex[0].Prompt, "You are helpful.") {
		t.Errorf("extraction calls: %d; requests:\n%s", len(ex), srv.Bodies())
	}
	gitOut(t, repo, "fsck", "--strict", "--no-progress")
	if st := gitOut(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("status not clean:\n%s", st)
	}
	// The transcript written through the mount stays a local file: no word
	// of it is in any git object (the transcripts rule).
	secrettest.ScanRepo(t, repo, []string{"plan a weekend trip", "needs a sitter"}, "transcripts")
}

// TestMountWritesDuringASlowDream: the agent writes 50 memories through
// the mount while a consolidation dreams with a model that answers only
// once all 50 are written. No write waits for the dream (one that did
// would wait for ever); then main holds all 50 and the dream's memory,
// joined by one merge commit.
func TestMountWritesDuringASlowDream(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			t.Skip("not root and no fusermount3")
		}
	}
	srv := llmtest.New(t)
	release := make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })
	srv.Queue(llmtest.KindExtract, llmtest.Reply{Until: release, Content: `{"facts":[{"kind":"user","slug":"has-cat-miso","description":"Has a grey cat called Miso","fact":"You have a grey cat called Miso.","episode":"","topic":"","search":[],"pinned":false}]}`})
	srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})

	repo, mnt, cmd, logs := mountWithFakeModel(t, srv, "300ms")
	if err := os.WriteFile(filepath.Join(mnt, "transcripts", "s1.jsonl"), []byte(`{"role":"user","content":"My grey cat Miso needs a sitter."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(srv.CallsOf(llmtest.KindExtract)) == 1 }, "the dream asking the model")
	written := make(chan error, 1)
	go func() {
		for i := range 50 {
			data := fmt.Sprintf("---\ndescription: Note %d\n---\n# Note %d\n\n## Fact\nNote %d.\n\n## Access log\n", i, i, i)
			if err := os.WriteFile(filepath.Join(mnt, "user_memory", fmt.Sprintf("note-%02d.md", i)), []byte(data), 0o644); err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}()
	// The deadline only stops a hang: the model answers after the writes.
	select {
	case err := <-written:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("the writes did not return while the dream waited for the model: they wait for the dream\n%s", logs.String())
	}
	if n := strings.TrimSpace(gitOut(t, repo, "rev-list", "--merges", "--count", "HEAD")); n != "0" {
		t.Fatalf("%s merges before the model answered", n)
	}
	releaseOnce.Do(func() { close(release) })
	waitFor(t, func() bool {
		return strings.TrimSpace(gitOut(t, repo, "rev-list", "--merges", "--count", "HEAD")) == "1"
	}, "the dream's merge")
	waitFor(t, func() bool {
		return strings.Count(gitOut(t, repo, "ls-tree", "-r", "--name-only", "HEAD", "user_memory"), "user_memory/note-") == 50
	}, "all 50 notes committed")
	stopMindmount(t, cmd, logs)
	files := gitOut(t, repo, "ls-tree", "-r", "--name-only", "HEAD", "user_memory")
	if !strings.Contains(files, "user_memory/has-cat-miso.md") {
		t.Fatalf("the dream's memory is not in main:\n%s\nlogs:\n%s", files, logs.String())
	}
	// The notes were committed while the model thought: the merge's
	// first parent already holds them all.
	merge := strings.TrimSpace(gitOut(t, repo, "rev-list", "--merges", "HEAD"))
	if n := strings.Count(gitOut(t, repo, "ls-tree", "-r", "--name-only", merge+"^1", "user_memory"), "user_memory/note-"); n != 50 {
		t.Fatalf("only %d notes were committed before the dream merged", n)
	}
	gitOut(t, repo, "fsck", "--strict", "--no-progress")
}
