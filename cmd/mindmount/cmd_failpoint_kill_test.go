package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/fs/gitrepo/failpoint"
)

// The failpoint suite (issue 14, "fault injection as a suite"): for each
// named point of the write path, the built binary is started with
// MINDMOUNT_FAILPOINT set, made to commit, and dies by SIGKILL exactly there.
// It is then started again with nothing armed, and every file a writer
// closed must be on disk and in HEAD, with "git fsck" and "git status"
// clean and no manual step.
var killPoints = []string{
	failpoint.IndexLocked,
	failpoint.ObjectsWritten,
	failpoint.RefUpdated,
	failpoint.IndexWritten,
	failpoint.IndexRenamed,
}

func TestFailpointKillWatch(t *testing.T) {
	requireGitCLI(t)
	for _, point := range killPoints {
		t.Run(point, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "memory")
			runCmd(t, "init", dir)
			args := []string{"watch", dir, "--debounce", "50ms", "--rescan", "0", "--consolidate=false"}
			ready := "mindmount: watching " + dir
			cmd, logs := startMindmount(t, append(noModel, failpoint.EnvVar+"="+point), ready, args...)
			writeWatchFile(t, dir, "user_memory/survives-crash.md", crashMemory("survives-crash"))
			waitKilled(t, cmd, logs, point)

			cmd, logs = startMindmount(t, noModel, ready, args...)
			checkRecovered(t, dir, logs, "user_memory/survives-crash.md")
			writeWatchFile(t, dir, "user_memory/after-restart.md", crashMemory("after-restart"))
			stopMindmount(t, cmd, logs)
			checkRecovered(t, dir, logs, "user_memory/after-restart.md")
		})
	}
}

func TestFailpointKillMount(t *testing.T) {
	requireGitCLI(t)
	requireFUSE(t)
	for _, point := range killPoints {
		t.Run(point, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "memory")
			runCmd(t, "init", dir)
			mnt := t.TempDir()
			args := []string{"mount", dir, mnt, "--debounce", "50ms", "--rescan", "0", "--consolidate=false"}
			ready := fmt.Sprintf("mindmount: mounted %s at %s", dir, mnt)
			cmd, logs := startMindmount(t, append(noModel, failpoint.EnvVar+"="+point), ready, args...)
			// Written and closed through the mount: the close returned,
			// so the file must survive whatever happens next.
			if err := os.WriteFile(filepath.Join(mnt, "user_memory", "survives-crash.md"), []byte(crashMemory("survives-crash")), 0o644); err != nil {
				t.Fatal(err)
			}
			waitKilled(t, cmd, logs, point)
			// A killed FUSE daemon leaves its mount point dead
			// (ENOTCONN) until it is detached.
			syscall.Unmount(mnt, syscall.MNT_DETACH)

			cmd, logs = startMindmount(t, noModel, ready, args...)
			checkRecovered(t, dir, logs, "user_memory/survives-crash.md")
			if err := os.WriteFile(filepath.Join(mnt, "user_memory", "after-restart.md"), []byte(crashMemory("after-restart")), 0o644); err != nil {
				t.Fatal(err)
			}
			stopMindmount(t, cmd, logs)
			checkRecovered(t, dir, logs, "user_memory/after-restart.md")
		})
	}
}

func crashMemory(slug string) string {
	return "---\ndescription: Memory " + slug + "\n---\n# " + slug + "\n\n## Fact\nYou wrote " + slug + ".\n"
}

// waitKilled waits for the daemon to die at its failpoint.
func waitKilled(t *testing.T, cmd *exec.Cmd, logs *logBuffer, point string) {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ProcessState.String() != "signal: killed" {
			t.Fatalf("mindmount did not die by SIGKILL at %s: %v\n%s", point, err, logs.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("mindmount never reached the failpoint %s\n%s", point, logs.String())
	}
}

// checkRecovered asserts that rel is on disk and in HEAD and that git
// finds the repository sound and clean.
func checkRecovered(t *testing.T, dir string, logs *logBuffer, rel string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
		t.Fatalf("%s lost from disk: %v", rel, err)
	}
	if out, err := exec.Command("git", "-C", dir, "cat-file", "-e", "HEAD:"+rel).CombinedOutput(); err != nil {
		t.Fatalf("%s not in HEAD: %v %s\nlogs:\n%s", rel, err, out, logs.String())
	}
	gitOut(t, dir, "fsck", "--strict", "--no-progress")
	if st := gitOut(t, dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
		t.Fatalf("git status not clean:\n%s\nlogs:\n%s", st, logs.String())
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
		t.Fatalf(".git/index.lock left behind\nlogs:\n%s", logs.String())
	}
}

func requireGitCLI(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
}

func requireFUSE(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			t.Skip("not root and no fusermount3")
		}
	}
}

// TestSecondDaemonRefused is issue 11.3: a second daemon on a repository
// already served is refused with a clear error, whatever the front.
func TestSecondDaemonRefused(t *testing.T) {
	requireGitCLI(t)
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	cmd, logs := startMindmount(t, noModel, "mindmount: watching "+dir, "watch", dir, "--consolidate=false")
	tries := [][]string{{"watch", dir, "--consolidate=false"}}
	if _, err := os.Stat("/dev/fuse"); err == nil && os.Geteuid() == 0 {
		tries = append(tries, []string{"mount", dir, t.TempDir(), "--consolidate=false"})
	}
	for _, args := range tries {
		second := exec.Command(mindmountBinary(t), args...)
		second.Env = append(os.Environ(), noModel...)
		done := make(chan struct{})
		var out []byte
		var err error
		go func() { out, err = second.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			second.Process.Kill()
			t.Fatalf("mindmount %s on a served repository did not exit", args[0])
		}
		if err == nil || !strings.Contains(string(out), "already serving this repository") {
			t.Errorf("mindmount %s on a served repository: %v\n%s", args[0], err, out)
		}
		if len(args) > 2 && mounted(args[2]) {
			t.Errorf("second daemon mounted %s", args[2])
			syscall.Unmount(args[2], syscall.MNT_DETACH)
		}
	}
	stopMindmount(t, cmd, logs)
	// Once the first is gone, the repository can be served again.
	cmd, logs = startMindmount(t, noModel, "mindmount: watching "+dir, "watch", dir, "--consolidate=false")
	stopMindmount(t, cmd, logs)
}

// TestFailpointKillConsolidation kills the daemon inside consolidation's
// Apply, after the memory files and the cursor reached the work tree and
// before anything was committed; the restart commits them (the recovery
// commit), with git sound and clean and no second run of the same
// messages.
func TestFailpointKillConsolidation(t *testing.T) {
	requireGitCLI(t)
	srv := llmtest.New(t)
	srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: `{"facts":[{"kind":"user","slug":"has-cat-miso","description":"Has a grey cat called Miso","fact":"You have a grey cat called Miso.","episode":"You mentioned Miso."}]}`})
	srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
	env := fakeModelEnv(srv)
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	args := []string{"watch", dir, "--debounce", "50ms", "--rescan", "0", "--idle", "200ms"}
	ready := "mindmount: watching " + dir
	cmd, logs := startMindmount(t, append(env, failpoint.EnvVar+"="+failpoint.WorktreeWritten), ready, args...)
	writeWatchFile(t, dir, "transcripts/s1.jsonl", `{"role":"user","content":"My grey cat Miso needs a sitter."}`+"\n")
	waitKilled(t, cmd, logs, failpoint.WorktreeWritten)

	cmd, logs = startMindmount(t, env, ready, args...)
	checkRecovered(t, dir, logs, "user_memory/has-cat-miso.md")
	stopMindmount(t, cmd, logs)
	checkRecovered(t, dir, logs, "user_memory/has-cat-miso.md")
	if n := len(srv.CallsOf(llmtest.KindExtract)); n != 1 {
		t.Errorf("%d extraction calls, want 1 (the cursor was recovered with the memory)\n%s", n, logs.String())
	}
}
