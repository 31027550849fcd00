package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	mnt := t.TempDir()
	// The readiness handshake: the line is printed once the mount is usable.
	cmd, logs := startEngram(t, noModel, fmt.Sprintf("engram: mounted %s at %s", repo, mnt),
		"mount", repo, mnt, "--debounce", "100ms")

	mem := "---\ndescription: Has a dog called Pixel\n---\n# Has Dog Pixel\n\n## Fact\nYou have a dog called Pixel.\n"
	if err := os.WriteFile(filepath.Join(mnt, "user_memory", "has-dog-pixel.md"), []byte(mem), 0o644); err != nil {
		t.Fatal(err)
	}
	idx, err := os.ReadFile(filepath.Join(mnt, "user_memory.md"))
	if err != nil || !strings.Contains(string(idx), "has-dog-pixel") {
		t.Errorf("index through the mount: %q, %v", idx, err)
	}

	// SIGTERM at once: the pending write must still be committed.
	stopEngram(t, cmd, logs)
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
