package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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

	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	mnt := t.TempDir()
	cmd, logs := startMindmount(t, []string{"MINDMOUNT_LLM=ollama", "OLLAMA_HOST=" + srv.OllamaURL(), "MINDMOUNT_MODEL=fake"},
		"mindmount: mounted "+repo+" at "+mnt, "mount", repo, mnt, "--debounce", "100ms", "--idle", "500ms")

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
	if n := strings.Count(authors, "consolidator"); n != 1 {
		t.Fatalf("%d consolidation commits, want 1; authors:\n%s\nlogs:\n%s", n, authors, logs.String())
	}
	commit := gitOut(t, repo, "log", "--author=consolidator", "--format=%s%n%b", "--name-only")
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
