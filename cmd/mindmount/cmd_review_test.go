package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
	tip := shownTip(t, repo, 1)
	if !strings.Contains(list, "   tip "+tip+"\n") {
		t.Fatalf("review does not print the tip %s:\n%s", tip, list)
	}
	// Without the tip, or with another, nothing is merged.
	var out, errOut bytes.Buffer
	if code := run([]string{"review", "approve", "1", repo}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "--tip is required") {
		t.Fatalf("approve without --tip: exit %d: %s", code, errOut.String())
	}
	errOut.Reset()
	if code := run([]string{"review", "approve", "1", "--tip", "0123456789abc", repo}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "changed since it was shown") {
		t.Fatalf("approve with another tip: exit %d: %s", code, errOut.String())
	}
	if gitOut(t, repo, "rev-parse", "HEAD") != head {
		t.Fatal("a refused approval merged")
	}
	if out := runCmd(t, "review", "approve", "1", "--tip", tip[:10], repo); !strings.Contains(out, "merged mindmount/dream/1 as ") {
		t.Fatalf("approve: %s", out)
	}
	if ps := strings.Fields(gitOut(t, repo, "log", "-1", "--format=%P")); len(ps) != 2 {
		t.Fatalf("approve made no merge commit: %v", ps)
	}
	if _, err := os.Stat(filepath.Join(repo, "user_memory", "speak-italian.md")); err != nil {
		t.Fatal("the approved memory is not in the work tree")
	}

	consolidateOne("s2.jsonl", "I am a pilot, ha ha.", "are a pilot")
	rejectTwo(t, repo)
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
	errOut.Reset()
	if code := run([]string{"review", "approve", "2", "--tip", tip, repo}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "no pending dream with that number") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	gitOut(t, repo, "fsck", "--strict", "--no-progress")
}

// TestReviewAsksTheDaemon: while "mindmount watch" serves the repository
// (its one writer), "mindmount consolidate" and "mindmount review approve
// N" / "reject N" from the command line are asked of the daemon through
// its control socket: the dream is made, merged and dropped by the
// daemon's own consolidator and tracker (its log names the merge commit),
// not refused because a daemon holds the repository, and not done beside
// it.
func TestReviewAsksTheDaemon(t *testing.T) {
	srv := llmtest.New(t)
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	os.MkdirAll(filepath.Join(repo, ".git", "mindmount"), 0o700)
	if err := os.WriteFile(filepath.Join(repo, ".git", "mindmount", "config"), []byte("merge: review\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, logs := startMindmount(t, fakeModelEnv(srv),
		"mindmount: watching "+repo, "watch", repo, "--debounce", "50ms", "--idle", "1h")
	defer stopMindmount(t, cmd, logs)
	// No model for the commands themselves: only the daemon's may be used.
	t.Setenv("MINDMOUNT_LLM", "openai")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	dream := func(name, msg, slug, fact string) {
		t.Helper()
		writeWatchFile(t, repo, "transcripts/"+name, `{"role":"user","content":"`+msg+`"}`+"\n")
		srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []map[string]any{{"kind": "user", "slug": slug, "description": fact, "fact": fact}}})})
		srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
		if out := runCmd(t, "consolidate", repo); !strings.Contains(out, "Consolidated by the daemon serving") || !strings.Contains(out, "waits for review") {
			t.Fatalf("consolidate:\n%s", out)
		}
	}
	dream("s1.jsonl", "I speak Italian.", "speaks-italian", "You speak Italian.")
	tip := shownTip(t, repo, 1)
	// The daemon's typed error for a tip that is not the dream's crosses
	// the socket: a clear message, exit 1, nothing merged.
	var stdoutB, errOut bytes.Buffer
	if code := run([]string{"review", "approve", "1", "--tip", "0123456789abc", repo}, &stdoutB, &errOut); code != 1 || !strings.Contains(errOut.String(), "changed since it was shown") {
		t.Fatalf("approving another tip through the daemon: exit %d: %s", code, errOut.String())
	}
	out := runCmd(t, "review", "approve", "1", "--tip", tip, repo)
	if !strings.Contains(out, "merged mindmount/dream/1 as ") {
		t.Fatalf("approve: %s", out)
	}
	merge := gitOut(t, repo, "rev-parse", "HEAD")
	if ps := strings.Fields(gitOut(t, repo, "log", "-1", "--format=%P")); len(ps) != 2 || ps[1] != tip {
		t.Fatalf("approve made no merge of the shown tip %s: parents %v", tip, ps)
	}
	if !strings.Contains(out, merge[:7]) {
		t.Fatalf("approve printed %q, the merge is %s", out, merge)
	}
	waitFor(t, func() bool {
		return strings.Contains(logs.String(), "dream merged") && strings.Contains(logs.String(), "commit="+merge[:7])
	}, "the daemon's log of its merge commit "+merge[:7])

	dream("s2.jsonl", "I am a pilot, ha ha.", "is-a-pilot", "You are a pilot.")
	rejectTwo(t, repo)
	// The daemon's typed error crosses the socket: a clear message, exit 1.
	errOut.Reset()
	if code := run([]string{"review", "approve", "2", "--tip", tip, repo}, &stdoutB, &errOut); code != 1 || !strings.Contains(errOut.String(), "no pending dream with that number") {
		t.Fatalf("approving the rejected dream: exit %d: %s", code, errOut.String())
	}
}

// rejectTwo rejects dream 2 of repo through the CLI and checks, with the
// git CLI, that no memory changed and its branch is gone, as the approved
// dream 1's is.
func rejectTwo(t *testing.T, repo string) {
	t.Helper()
	before := gitOut(t, repo, "ls-tree", "-r", "HEAD", "user_memory")
	if out := runCmd(t, "review", "reject", "2", repo, "--reason", "a joke"); !strings.Contains(out, "rejected mindmount/dream/2") {
		t.Fatalf("reject: %s", out)
	}
	if gitOut(t, repo, "ls-tree", "-r", "HEAD", "user_memory") != before {
		t.Fatal("a rejection changed memories")
	}
	if got := gitOut(t, repo, "branch", "-a", "--list", "mindmount/*", "--format=%(refname:short)"); got != "" {
		t.Fatalf("branches after the rejection: %q, want none (the approved and the rejected dream's are gone)", got)
	}
}

// shownTip is the tip "mindmount review show N" prints for dream n.
func shownTip(t *testing.T, repo string, n int) string {
	t.Helper()
	out := runCmd(t, "review", "show", strconv.Itoa(n), repo)
	first, _, _ := strings.Cut(out, "\n")
	f := strings.Fields(first)
	if len(f) != 5 || f[3] != "tip" || len(f[4]) != 40 {
		t.Fatalf("review show %d prints no tip:\n%s", n, out)
	}
	return f[4]
}
