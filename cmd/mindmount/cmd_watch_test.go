package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// startWatch runs "mindmount watch DIR args..." and returns once it printed
// its readiness line.
func startWatch(t *testing.T, dir string, args ...string) (*exec.Cmd, *logBuffer) {
	t.Helper()
	return startMindmount(t, noModel, "mindmount: watching "+dir, append([]string{"watch", dir}, args...)...)
}

func TestWatchCommandEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	// Left over from a crash: committed at start.
	mem := "---\ndescription: Likes tea\n---\n# Likes Tea\n\n## Fact\nYou like tea.\n"
	writeWatchFile(t, dir, "user_memory/likes-tea.md", mem)

	// A debounce far longer than the test: only the SIGTERM flush can
	// commit the second file.
	cmd, logs := startWatch(t, dir, "--debounce", "1h", "--max-wait", "2h", "--rescan", "0")
	if s := gitOut(t, dir, "log", "-1", "--format=%an|%s"); s != "mindmount|mindmount: recover 1 uncommitted change" {
		t.Errorf("recovery commit: %q", s)
	}
	for _, f := range []string{"user_memory.md", "CONTEXT.md", ".mindmount/status", ".mindmount/index/user_memory.md", ".mindmount/index/character_memory.md"} {
		waitFor(t, func() bool { _, err := os.Stat(filepath.Join(dir, f)); return err == nil }, f+" written")
	}
	writeWatchFile(t, dir, "user_memory/likes-jazz.md", strings.ReplaceAll(mem, "tea", "jazz"))
	stopMindmount(t, cmd, logs)
	if s := gitOut(t, dir, "log", "-1", "--format=%s"); s != "editor: add user_memory/likes-jazz.md" {
		t.Errorf("last commit %q\nlogs:\n%s", s, logs.String())
	}
	gitOut(t, dir, "fsck", "--strict", "--no-progress")
	if st := gitOut(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("status not clean:\n%s", st)
	}
	if strings.Contains(logs.String(), "not git-ignored") {
		t.Errorf("template .gitignore misses a synthesized file:\n%s", logs.String())
	}
	// The full listing a cut index points to is a real file in watch mode,
	// the same listing "mindmount index --all" prints, and never committed.
	full, err := os.ReadFile(filepath.Join(dir, ".mindmount", "index", "user_memory.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := runCmd(t, "index", dir, "--all"); string(full) != want {
		t.Errorf(".mindmount/index/user_memory.md:\n%s\nmindmount index --all:\n%s", full, want)
	}
	if files := gitOut(t, dir, "ls-files"); strings.Contains(files, ".mindmount/index") {
		t.Errorf("full index committed:\n%s", files)
	}
}

func TestWatchRefusesNonMindmountDir(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := run([]string{"watch", dir}, &out, &errb); code == 0 {
		t.Fatal("watch on an empty directory succeeded")
	}
	// An empty folder is most likely a mountpoint with nothing mounted.
	if !strings.Contains(errb.String(), "not a mindmount repository: it is empty (nothing is mounted there? start mindmount mount REPO "+dir+"), or make one with mindmount init "+dir) {
		t.Errorf("stderr: %s", errb.String())
	}
	errb.Reset()
	if code := run([]string{"status", filepath.Join(dir, "missing")}, &out, &errb); code == 0 {
		t.Fatal("status on a missing directory succeeded")
	}
}

func TestStatusCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	writeWatchFile(t, dir, "user_memory/bad.md", "---\ndescription: x\nflavour: y\n---\n# Bad\n")
	writeWatchFile(t, dir, "user_memory/good.md", "---\ndescription: Good\n---\n# Good\n\n## Fact\nGood.\n")
	out := runCmd(t, "status", dir)
	for _, want := range []string{"user_memory/bad.md:3: ", "A user_memory/good.md", "last commit: ", "mindmount init"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	// status only reports: nothing was committed.
	if n := gitOut(t, dir, "rev-list", "--count", "HEAD"); n != "1" {
		t.Errorf("status made commits: %s", n)
	}
}

func writeWatchFile(t *testing.T, dir, rel, data string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(10 * time.Millisecond) // poll interval
	}
}

// TestWatchConsolidatesOnRequest: a transcript dropped into the watched
// directory and a write to .mindmount/consolidate lead to a consolidation
// commit, and the synthesized index shows the new memory.
func TestWatchConsolidatesOnRequest(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	srv := llmtest.New(t)
	srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: `{"facts":[{"kind":"user","slug":"speaks-italian","description":"Speaks Italian","fact":"You speak Italian.","episode":""}]}`})
	srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	cmd, logs := startMindmount(t, fakeModelEnv(srv),
		"mindmount: watching "+dir, "watch", dir, "--debounce", "50ms", "--idle", "1h")
	writeWatchFile(t, dir, "transcripts/s1.jsonl", `{"role":"user","content":"I speak Italian."}`+"\n")
	// Transcripts are a local inbox, never committed (the transcripts
	// rule); the requested run reads it from disk.
	writeWatchFile(t, dir, ".mindmount/consolidate", "now\n")
	waitFor(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "user_memory.md"))
		return strings.Contains(string(b), "user_memory/speaks-italian.md")
	}, "consolidated memory in user_memory.md")
	stopMindmount(t, cmd, logs)
	if s := gitOut(t, dir, "log", "-1", "--format=%an|%s"); !strings.HasPrefix(s, "consolidator|consolidate transcripts/s1.jsonl") {
		t.Errorf("last commit %q", s)
	}
	if files := gitOut(t, dir, "ls-files"); strings.Contains(files, ".mindmount/consolidate") || strings.Contains(files, "transcripts/s1.jsonl") {
		t.Errorf("control file or transcript committed:\n%s", files)
	}
	gitOut(t, dir, "fsck", "--strict", "--no-progress")
	if st := gitOut(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Errorf("status not clean:\n%s", st)
	}
}

// TestConsolidateAsksTheDaemon: mindmount consolidate on a repository a
// daemon serves asks that daemon (its one writer) instead of running a
// second consolidation beside it; the daemon's consolidator commits.
func TestConsolidateAsksTheDaemon(t *testing.T) {
	srv := llmtest.New(t)
	srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: `{"facts":[{"kind":"user","slug":"speaks-italian","description":"Speaks Italian","fact":"You speak Italian.","episode":""}]}`})
	srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	cmd, logs := startMindmount(t, fakeModelEnv(srv),
		"mindmount: watching "+dir, "watch", dir, "--debounce", "50ms", "--idle", "1h")
	writeWatchFile(t, dir, "transcripts/s1.jsonl", `{"role":"user","content":"I speak Italian."}`+"\n")
	// No model for the command itself: only the daemon's may be used.
	t.Setenv("MINDMOUNT_LLM", "openai")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	// The command waits for the daemon's run and prints its report.
	out := runCmd(t, "consolidate", dir)
	if !strings.Contains(out, "Consolidated by the daemon serving "+dir) || !strings.Contains(out, "transcripts/s1.jsonl#1: 1 added") {
		t.Fatalf("consolidate said:\n%s", out)
	}
	if an := gitOut(t, dir, "log", "-1", "--format=%an"); !strings.HasPrefix(an, "consolidator") {
		t.Fatalf("the last commit is %s's, not the daemon's consolidation", an)
	}
	stopMindmount(t, cmd, logs)
}
