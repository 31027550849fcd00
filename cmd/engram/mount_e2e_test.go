package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMountEndToEnd runs the built engram binary: mount, readiness line,
// write through the mount, SIGTERM, exit 0, mount gone, commit in git.
func TestMountEndToEnd(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			t.Skip("not root and no fusermount3")
		}
	}
	bin := filepath.Join(t.TempDir(), "engram")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	repo := filepath.Join(t.TempDir(), "memory")
	if out, err := exec.Command(bin, "init", repo).CombinedOutput(); err != nil {
		t.Fatalf("engram init: %v\n%s", err, out)
	}
	mnt := t.TempDir()

	cmd := exec.Command(bin, "mount", repo, mnt, "--debounce", "100ms")
	cmd.Env = append(os.Environ(), "ENGRAM_LLM=openai", "OPENAI_BASE_URL=http://127.0.0.1:9/v1", "ENGRAM_MODEL=none")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-exited
		}
		if mounted(mnt) {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})

	// The readiness handshake: the line is printed once the mount is usable.
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "engram: mounted") {
				ready <- sc.Text()
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() { exited <- cmd.Wait() }()
	select {
	case line := <-ready:
		if want := fmt.Sprintf("engram: mounted %s at %s", repo, mnt); line != want {
			t.Errorf("readiness line %q, want %q", line, want)
		}
	case err := <-exited:
		t.Fatalf("engram mount exited before ready: %v\n%s", err, logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("no readiness line\n%s", logs.String())
	}

	mem := "---\ndescription: Has a dog called Pixel\n---\n# Has Dog Pixel\n\n## Fact\nYou have a dog called Pixel.\n"
	if err := os.WriteFile(filepath.Join(mnt, "user_memory", "has-dog-pixel.md"), []byte(mem), 0o644); err != nil {
		t.Fatal(err)
	}
	idx, err := os.ReadFile(filepath.Join(mnt, "user_memory.md"))
	if err != nil || !strings.Contains(string(idx), "has-dog-pixel") {
		t.Errorf("index through the mount: %q, %v", idx, err)
	}

	// SIGTERM at once: the pending write must still be committed.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("engram mount exit: %v\n%s", err, logs.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("engram mount did not exit after SIGTERM\n%s", logs.String())
	}
	if mounted(mnt) {
		t.Errorf("%s still in /proc/mounts", mnt)
	}
	out, err := exec.Command("git", "-C", repo, "log", "-1", "--name-only", "--format=%s").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "user_memory/has-dog-pixel.md") {
		t.Errorf("last commit lacks the memory: %s %v\n%s", out, err, logs.String())
	}
	if out, err := exec.Command("git", "-C", repo, "status", "--porcelain").CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) != 0 {
		t.Errorf("git status after shutdown: %q %v", out, err)
	}
}

// TestMountErrorsCLI checks the messages of the usual mistakes.
func TestMountErrorsCLI(t *testing.T) {
	plain := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run([]string{"mount", plain, t.TempDir()}, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "not an engram repository") {
		t.Errorf("mount of a plain directory: code %d, %q", code, errOut.String())
	}
	errOut.Reset()
	if code := run([]string{"mount", plain}, &out, &errOut); code != 2 {
		t.Errorf("mount with one argument: code %d", code)
	}
}

// mounted reports whether dir is a mount point in /proc/mounts.
func mounted(dir string) bool {
	b, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == dir {
			return true
		}
	}
	return false
}
