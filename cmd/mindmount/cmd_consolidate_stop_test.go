package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// consolidateDeadline stops a test whose consolidation hangs; it is not a
// timing assertion.
const consolidateDeadline = 20 * time.Second

// startConsolidate runs the built binary's "consolidate REPO" against the
// fake model srv; logs collects its stdout and stderr; exited gets Wait's
// error once (a process still running at the end of the test is killed).
func startConsolidate(t *testing.T, srv *llmtest.Server, repo string) (*exec.Cmd, <-chan error, *logBuffer) {
	t.Helper()
	cmd := exec.Command(mindmountBinary(t), "consolidate", repo)
	logs := new(logBuffer)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.Env = append(os.Environ(), fakeModelEnv(srv)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited, done := make(chan error, 1), make(chan struct{})
	go func() { exited <- cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Kill() // an error once it exited
		<-done
	})
	return cmd, exited, logs
}

// "mindmount consolidate REPO" stops on SIGTERM while the model never
// answers: the signal reaches the model call and the run, nothing is
// committed, and the command exits non-zero.
func TestConsolidateStopsOnSIGTERM(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	srv := llmtest.New(t)
	srv.Handle(func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Hang: true} })
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	if err := os.WriteFile(filepath.Join(repo, "transcripts", "s.jsonl"), []byte(`{"role":"user","content":"I keep bees."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	head := gitOut(t, repo, "rev-parse", "HEAD")
	cmd, exited, logs := startConsolidate(t, srv, repo)
	for deadline := time.Now().Add(60 * time.Second); len(srv.CallsOf(llmtest.KindExtract)) == 0; time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("the run ended before reaching the model: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never reached the model\n%s", logs.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Fatalf("a consolidation stopped by SIGTERM exited 0\n%s", logs.String())
		}
	case <-time.After(consolidateDeadline):
		t.Fatalf("mindmount consolidate still runs %s after SIGTERM\n%s", consolidateDeadline, logs.String())
	}
	if got := gitOut(t, repo, "rev-parse", "HEAD"); got != head {
		t.Fatalf("a stopped consolidation committed: HEAD %s, was %s", got, head)
	}
}

// A memory folder that is a symbolic link to a folder outside the
// repository ends the run at once with an error naming the folder, where
// the search for a free name used to loop for ever.
func TestConsolidateLinkedMemoryFolder(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	srv := llmtest.New(t)
	srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: `{"facts":[{"kind":"user","slug":"keeps-bees","description":"Keeps bees","fact":"You keep bees.","episode":""}]}`})
	srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	outside := t.TempDir()
	mem := filepath.Join(repo, "user_memory")
	if err := os.RemoveAll(mem); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, mem); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "transcripts", "s.jsonl"), []byte(`{"role":"user","content":"I keep bees."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, exited, logs := startConsolidate(t, srv, repo)
	select {
	case err := <-exited:
		if err == nil || !strings.Contains(logs.String(), "user_memory is a symbolic link") {
			t.Fatalf("consolidate with a linked user_memory: %v\n%s", err, logs.String())
		}
	case <-time.After(consolidateDeadline):
		t.Fatalf("mindmount consolidate with a linked user_memory still runs after %s\n%s", consolidateDeadline, logs.String())
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("the run wrote through the link: %v", ents)
	}
}
