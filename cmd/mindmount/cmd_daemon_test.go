package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

var (
	mindmountBinOnce sync.Once
	mindmountBin     string
	mindmountBinErr  error
)

// mindmountBinary builds the mindmount binary once for the tests that run it as a
// subprocess (with the race detector when the tests run with it).
func mindmountBinary(t *testing.T) string {
	t.Helper()
	mindmountBinOnce.Do(func() {
		// Below the tests' own temporary directory, removed by TestMain
		// (cmd_main_test.go): 36 MB must not stay behind after every run.
		dir, err := os.MkdirTemp("", "bin")
		if err != nil {
			mindmountBinErr = err
			return
		}
		mindmountBin = filepath.Join(dir, "mindmount")
		args := []string{"build", "-o", mindmountBin}
		if raceEnabled {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			mindmountBinErr = err
			t.Logf("go build: %s", out)
		}
	})
	if mindmountBinErr != nil {
		t.Fatalf("build mindmount: %v", mindmountBinErr)
	}
	return mindmountBin
}

// noModel points consolidation at a port where nothing listens.
var noModel = []string{"MINDMOUNT_LLM=openai", "OPENAI_BASE_URL=http://127.0.0.1:9/v1", "MINDMOUNT_MODEL=none"}

// startMindmount runs the built binary with args (env added to the test's
// environment) and returns once it printed its readiness line, which must
// be ready: the handshake, never a sleep. A process still running at the
// end of the test is killed; a mountpoint still mounted is detached.
func startMindmount(t *testing.T, env []string, ready string, args ...string) (*exec.Cmd, *logBuffer) {
	t.Helper()
	cmd, logs, line := startFirstLine(t, env, args...)
	t.Cleanup(func() {
		if len(args) > 2 && args[0] == "mount" && mounted(args[2]) {
			syscall.Unmount(args[2], syscall.MNT_DETACH)
		}
	})
	if line != ready {
		t.Fatalf("readiness line %q, want %q\nlogs:\n%s", line, ready, logs.String())
	}
	return cmd, logs
}

// logBuffer collects a subprocess's stderr; the test reads it while the
// process may still be writing, so every access is locked.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// stopMindmount sends SIGTERM and requires a clean exit.
func stopMindmount(t *testing.T, cmd *exec.Cmd, logs *logBuffer) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("mindmount %s: %v\n%s", cmd.Args[1], err, logs.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("mindmount %s did not exit after SIGTERM\n%s", cmd.Args[1], logs.String())
	}
}

// fakeModelEnv points a daemon at the fake model server srv.
func fakeModelEnv(srv *llmtest.Server) []string {
	return []string{"MINDMOUNT_LLM=ollama", "OLLAMA_HOST=" + srv.OllamaURL(), "MINDMOUNT_MODEL=fake"}
}

// mountWithFakeModel makes a new repository and mounts it with srv as
// its model, consolidating after idle; stop it with stopMindmount.
func mountWithFakeModel(t *testing.T, srv *llmtest.Server, idle string) (repo, mnt string, cmd *exec.Cmd, logs *logBuffer) {
	t.Helper()
	repo = filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	mnt = t.TempDir()
	cmd, logs = startMindmount(t, fakeModelEnv(srv), "mindmount: mounted "+repo+" at "+mnt, "mount", repo, mnt, "--debounce", "100ms", "--idle", idle)
	return repo, mnt, cmd, logs
}
