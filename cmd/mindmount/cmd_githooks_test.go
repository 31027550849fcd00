package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/control"
)

// TestInitInstallsPreCommit: "mindmount init" installs the hook; the real git
// CLI then refuses an invalid memory with the daemon's message and accepts
// a valid one, calling the mindmount found on PATH.
func TestInitInstallsPreCommit(t *testing.T) {
	requireGitCLI(t)
	bin := mindmountBinary(t)
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	hook, err := os.ReadFile(filepath.Join(dir, ".git", "hooks", "pre-commit"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hook), "exec mindmount hook pre-commit") || strings.Contains(string(hook), filepath.Dir(bin)) {
		t.Fatalf("hook must call mindmount by name:\n%s", hook)
	}
	if d := gitOut(t, dir, "config", "merge.mindmount-memory.driver"); d != "mindmount merge-memory %O %A %B %P" {
		t.Fatalf("memory driver %q", d)
	}
	bad := filepath.Join(dir, "user_memory", "bad.md")
	os.WriteFile(bad, []byte("---\ndescription: x\nstatus: sleeping\n---\n# Bad\n"), 0o644)
	gitOut(t, dir, "add", "user_memory/bad.md")
	cmd := exec.Command("git", "commit", "-q", "-m", "bad")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "user_memory/bad.md:3: ") {
		t.Fatalf("invalid memory not refused with path:line (err %v):\n%s", err, out)
	}
	os.WriteFile(bad, []byte("---\ndescription: x\nstatus: active\n---\n# Good\n"), 0o644)
	gitOut(t, dir, "add", "user_memory/bad.md")
	gitOut(t, dir, "commit", "-q", "-m", "good")
}

// TestSyncCommandAsksTheDaemon: "mindmount sync" reaches the running daemon
// through its socket and waits for the outcome.
func TestSyncCommandAsksTheDaemon(t *testing.T) {
	requireGitCLI(t)
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	bare := filepath.Join(t.TempDir(), "remote.git")
	gitOut(t, filepath.Dir(bare), "init", "-q", "--bare", "-b", "main", bare)
	runCmd(t, "remote", "set", dir, bare)
	ready := "mindmount: watching " + dir
	cmd, logs := startMindmount(t, noModel, ready, "watch", dir, "--debounce", "50ms", "--rescan", "0", "--consolidate=false")
	// The sync service starts beside the tracker, just after the
	// readiness line: wait for its socket.
	sock := filepath.Join(dir, ".git", filepath.FromSlash(control.SocketFile))
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no sync socket\n%s", logs.String())
		}
	}
	out := runCmd(t, "sync", dir)
	if !strings.Contains(out, "Synced by the running daemon.") || !strings.Contains(out, "Sync: "+bare) {
		t.Fatalf("sync output:\n%s\nlogs:\n%s", out, logs.String())
	}
	if got, want := gitOut(t, bare, "rev-parse", "main"), gitOut(t, dir, "rev-parse", "HEAD"); got != want {
		t.Fatalf("remote at %s, local at %s", got, want)
	}
	if st := runCmd(t, "remote", "show", dir); !strings.Contains(st, "0 ahead, 0 behind") {
		t.Fatalf("status:\n%s", st)
	}
	stopMindmount(t, cmd, logs)
	// Without a daemon it syncs itself.
	if out := runCmd(t, "sync", dir); !strings.Contains(out, "Synced: up to date") {
		t.Fatalf("sync without a daemon:\n%s", out)
	}
}
