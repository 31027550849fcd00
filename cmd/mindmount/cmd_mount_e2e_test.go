package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMountEndToEnd runs the built mindmount binary: mount, readiness line,
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
	cmd, logs := startMindmount(t, noModel, fmt.Sprintf("mindmount: mounted %s at %s", repo, mnt),
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
	stopMindmount(t, cmd, logs)
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
	if code := run([]string{"mount", plain, t.TempDir()}, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "not a mindmount repository") {
		t.Errorf("mount of a plain directory: code %d, %q", code, errOut.String())
	}
	errOut.Reset()
	if code := run([]string{"mount", plain}, &out, &errOut); code != 2 {
		t.Errorf("mount with one argument: code %d", code)
	}

	// A missing mountpoint says how to make it, in mount and serve alike,
	// before anything starts (issue 11.2).
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo)
	missing := filepath.Join(t.TempDir(), "nomnt")
	for _, args := range [][]string{{"mount", repo, missing}, {"serve", "--root", t.TempDir(), "--mount", missing}} {
		errOut.Reset()
		want := "mindmount " + args[0] + ": mountpoint " + missing + " does not exist: create it with mkdir -p " + missing + "\n"
		if code := run(args, &out, &errOut); code != 1 || errOut.String() != want {
			t.Errorf("%s on a missing mountpoint: exit %d, stderr %q, want %q", args[0], code, errOut.String(), want)
		}
	}
	// A mountpoint holding one file: one line, no "1 entries".
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "notes.txt"), nil, 0o644)
	errOut.Reset()
	want := "mindmount mount: mountpoint is busy: " + full + " is not empty (it holds notes.txt): mount on an empty directory\n"
	if code := run([]string{"mount", repo, full}, &out, &errOut); code != 1 || errOut.String() != want {
		t.Errorf("mount on a non-empty directory: exit %d, stderr %q, want %q", code, errOut.String(), want)
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

// TestMountAsNormalUserOneLine runs mindmount mount as a uid that is not root
// on a mountpoint it cannot write: whatever this machine lacks (access to
// /dev/fuse, user_allow_other for --allow-other, a writable mountpoint),
// the answer is one line naming the cause and the fix, printed before
// fusermount3 runs, so its own line never appears (issue 11.2).
func TestMountAsNormalUserOneLine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to act as another uid")
	}
	const uid = 54321
	bin := mindmountBinary(t)
	// A place the uid reaches: t.TempDir is root's alone, and the
	// temporary folder above it may be 0700 too (mktemp -d).
	top := t.TempDir()
	reachable(top)
	exe := filepath.Join(top, "mindmount")
	if b, err := os.ReadFile(bin); err != nil || os.WriteFile(exe, b, 0o755) != nil {
		t.Fatalf("copy the binary: %v", err)
	}
	repo := filepath.Join(top, "memory")
	runCmd(t, "init", repo)
	if out, err := exec.Command("chown", "-R", fmt.Sprint(uid), repo).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v %s", err, out)
	}
	mnt := filepath.Join(top, "mnt") // root's, mode 0755: not writable by uid
	os.Mkdir(mnt, 0o755)

	for _, args := range [][]string{{"mount", repo, mnt}, {"mount", "--allow-other", repo, mnt}} {
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), "HOME="+top, "MINDMOUNT_LLM=openai", "OPENAI_BASE_URL=http://127.0.0.1:9/v1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err == nil {
			exec.Command("umount", "-l", mnt).Run()
			t.Fatalf("%v as uid %d: mounted on a directory it cannot write\n%s", args, uid, stdout.String())
		}
		// Log lines (slog) are not the error; the error is the line
		// "mindmount mount: ...".
		var errLines []string
		for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
			if !strings.HasPrefix(l, "time=") {
				errLines = append(errLines, l)
			}
		}
		if len(errLines) != 1 || !strings.HasPrefix(errLines[0], "mindmount mount: ") {
			t.Fatalf("%v as uid %d: want one line, got:\n%s", args, uid, stderr.String())
		}
		line := errLines[0]
		if fi, err := os.Stat("/dev/fuse"); err == nil && fi.Mode().Perm()&0o006 != 0o006 {
			if !strings.Contains(line, "cannot open /dev/fuse (permission denied") {
				t.Errorf("%v with /dev/fuse mode %#o: %s", args, fi.Mode().Perm(), line)
			}
		} else if !strings.Contains(line, "user_allow_other") && !strings.Contains(line, "not writable by you") && !strings.Contains(line, "/dev/fuse") {
			t.Errorf("%v: %s", args, line)
		}
		if strings.Contains(line, "install fuse3") && fusermount3Installed() {
			t.Errorf("%v: tells to install fuse3, which is installed: %s", args, line)
		}
	}
}

func fusermount3Installed() bool {
	_, err := exec.LookPath("fusermount3")
	return err == nil
}
