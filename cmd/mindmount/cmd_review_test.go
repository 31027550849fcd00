package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// TestReviewCommand is review mode end to end through the CLI: with
// "merge: review" a consolidation waits; review lists it with its facts,
// review show prints its diff, approve merges it (a merge commit), reject
// drops another (no memory change; its transcript is never proposed
// again).
func TestReviewCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	os.MkdirAll(filepath.Join(repo, ".git", "mindmount"), 0o700)
	if err := os.WriteFile(filepath.Join(repo, ".git", "mindmount", "config"), []byte("merge: review\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t)
	t.Setenv("MINDMOUNT_LLM", "")
	t.Setenv("OLLAMA_HOST", srv.OllamaURL())
	consolidateOne := func(name, msg, fact string) {
		t.Helper()
		os.WriteFile(filepath.Join(repo, "transcripts", name), []byte(`{"role":"user","content":"`+msg+`"}`+"\n"), 0o644)
		srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []map[string]any{{"kind": "user", "slug": strings.ToLower(strings.ReplaceAll(fact, " ", "-")), "description": fact, "fact": "You " + fact + "."}}})})
		srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
		if out := runCmd(t, "consolidate", repo, "--model", "fake"); !strings.Contains(out, "waits for review") {
			t.Fatalf("consolidate: %s", out)
		}
	}
	head := gitOut(t, repo, "rev-parse", "HEAD")
	consolidateOne("s1.jsonl", "I speak Italian.", "speak Italian")
	if gitOut(t, repo, "rev-parse", "HEAD") != head {
		t.Fatal("a dream under review changed main")
	}
	list := runCmd(t, "review", repo)
	if !strings.Contains(list, "1  mindmount/dream/1  transcripts/s1.jsonl#1: 1 added, 0 updated, 0 contradicted") || !strings.Contains(list, "added        user_memory/speak-italian.md — You speak Italian.") {
		t.Fatalf("review:\n%s", list)
	}
	if diff := runCmd(t, "review", "show", "1", repo); !strings.Contains(diff, "+You speak Italian.") {
		t.Fatalf("review show:\n%s", diff)
	}
	if out := runCmd(t, "review", "approve", "1", repo); !strings.Contains(out, "merged mindmount/dream/1 as ") {
		t.Fatalf("approve: %s", out)
	}
	if ps := strings.Fields(gitOut(t, repo, "log", "-1", "--format=%P")); len(ps) != 2 {
		t.Fatalf("approve made no merge commit: %v", ps)
	}
	if _, err := os.Stat(filepath.Join(repo, "user_memory", "speak-italian.md")); err != nil {
		t.Fatal("the approved memory is not in the work tree")
	}

	consolidateOne("s2.jsonl", "I am a pilot, ha ha.", "are a pilot")
	before := gitOut(t, repo, "ls-tree", "-r", "HEAD", "user_memory")
	if out := runCmd(t, "review", "reject", "2", repo, "--reason", "a joke"); !strings.Contains(out, "rejected mindmount/dream/2") {
		t.Fatalf("reject: %s", out)
	}
	if gitOut(t, repo, "ls-tree", "-r", "HEAD", "user_memory") != before {
		t.Fatal("a rejection changed memories")
	}
	if got := gitOut(t, repo, "branch", "-a", "--list", "mindmount/*", "--format=%(refname:short)"); got != "mindmount/dream/1" {
		t.Fatalf("branches after the rejection: %q, want only the approved mindmount/dream/1", got)
	}
	if msg := gitOut(t, repo, "log", "-1", "--format=%B"); !strings.Contains(msg, "Mindmount-Rejected: mindmount/dream/2") || !strings.Contains(msg, "Mindmount-Reason: a joke") {
		t.Fatalf("rejection commit:\n%s", msg)
	}
	if out := runCmd(t, "review", repo); !strings.Contains(out, "No dream waits for review (merge: review).") {
		t.Fatalf("review after the verdicts:\n%s", out)
	}
	if out := runCmd(t, "consolidate", repo, "--model", "fake"); !strings.Contains(out, "nothing new to consolidate") {
		t.Fatalf("the rejected transcript was proposed again: %s", out)
	}
	// A number that is no waiting dream: a clear error, exit 1.
	var out, errOut bytes.Buffer
	if code := run([]string{"review", "approve", "2", repo}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "no pending dream with that number") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	gitOut(t, repo, "fsck", "--strict", "--no-progress")
}
