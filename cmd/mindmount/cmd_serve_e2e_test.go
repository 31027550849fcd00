package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/host"
)

// startServeBinary runs the built binary's mindmount serve on root, mounted
// in t.TempDir(), and waits for its readiness line.
func startServeBinary(t *testing.T, root string, extra ...string) (*exec.Cmd, *logBuffer, string) {
	t.Helper()
	mnt := mountDir(t)
	t.Cleanup(func() { detachUnder(mnt) })
	args := append([]string{"serve", "--root", root, "--mount", mnt}, extra...)
	cmd, logs := startMindmount(t, noModel, "mindmount: serving "+root+" at "+mnt, args...)
	return cmd, logs, mnt
}

// detachUnder detaches every mount at or below dir (each user's mount
// under MNT) that a killed daemon left behind.
func detachUnder(dir string) {
	b, _ := os.ReadFile("/proc/mounts")
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && (f[1] == dir || strings.HasPrefix(f[1], dir+"/")) {
			syscall.Unmount(f[1], syscall.MNT_DETACH)
		}
	}
}

// waitExit waits for the daemon to exit by itself and returns its error.
func waitExit(t *testing.T, cmd *exec.Cmd, logs *logBuffer) error {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("mindmount did not exit\n%s", logs.String())
		return nil
	}
}

// The supported way to give an agent its memory: MNT/<id> bind-mounted
// into a sandbox running as the user's uid. The sandboxed shell reads the
// index, writes a memory with cat >, appends a use with echo >>, and the
// daemon commits both, naming the user and the sandbox; nothing of the
// memory tree outside /memory is reachable.
func TestServeBubblewrapSandbox(t *testing.T) {
	requireRootFUSE(t)
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bubblewrap is not installed (Debian package bubblewrap)")
	}
	root := serveRoot(t)
	_, _, mnt := startServeBinary(t, root, "--debounce", "100ms")
	sandbox := func(script string) (string, error) {
		args := []string{"--reuid", itoa(aliceUID), "--regid", itoa(aliceUID), "--clear-groups", "--",
			bwrap, "--unshare-all", "--die-with-parent", "--uid", itoa(aliceUID), "--gid", itoa(aliceUID),
			"--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
			"--symlink", "usr/lib64", "/lib64", "--proc", "/proc", "--dev", "/dev",
			"--bind", filepath.Join(mnt, "alice"), "/memory", "--chdir", "/memory",
			"sh", "-c", script}
		out, err := exec.Command("setpriv", args...).CombinedOutput()
		return string(out), err
	}
	if out, err := sandbox("true"); err != nil {
		if strings.Contains(out, "namespace") || strings.Contains(out, "Operation not permitted") {
			t.Skipf("bwrap cannot create namespaces here: %s", strings.TrimSpace(out))
		}
		t.Fatalf("bwrap: %v\n%s", err, out)
	}
	out, err := sandbox(`set -e
head -1 user_memory.md
cat > user_memory/likes-jazz.md <<'EOF'
---
description: Likes jazz
---
# Likes jazz

## Fact
You like jazz.

## Access log
EOF
echo "used, 01.12.26" >> user_memory/likes-jazz.md
grep -c "Likes jazz (uses: 1)" user_memory.md
ls / | tr '\n' ' '
ls ` + mnt + ` 2>&1 || true
ls ` + root + ` 2>&1 || true`)
	if err != nil {
		t.Fatalf("sandboxed shell: %v\n%s", err, out)
	}
	if !strings.HasPrefix(out, "# User memory\n1\n") {
		t.Fatalf("sandbox output:\n%s", out)
	}
	if strings.Contains(out, "bob") || strings.Contains(out, "users.json") {
		t.Fatalf("the sandbox reaches beyond /memory:\n%s", out)
	}
	dir := host.UserDir(root, "alice")
	deadline := time.Now().Add(30 * time.Second)
	for {
		log := gitLog(t, dir, "-1", "--format=%an%n%B", "--", "user_memory/likes-jazz.md")
		if strings.Contains(log, "Mindmount-User: alice") && strings.Contains(log, "Mindmount-Sandbox: bwrap[") {
			body, _ := exec.Command("git", "-c", "safe.directory=*", "-C", dir, "show", "HEAD:user_memory/likes-jazz.md").Output()
			if !strings.Contains(string(body), "used, 01.12.26") {
				t.Fatalf("committed memory lacks the use:\n%s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox's write was not committed with user and sandbox:\n%s", log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// SIGHUP re-reads the users at once; SIGTERM commits what is pending for
// every loaded user (the debounce is an hour), unmounts and exits 0.
func TestServeSignals(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	cmd, logs, mnt := startServeBinary(t, root, "--debounce", "1h", "--max-wait", "1h")
	writeAs(t, aliceUID, filepath.Join(mnt, "alice/user_memory/likes-tea.md"), teaMemory)
	writeAs(t, bobUID, filepath.Join(mnt, "bob/user_memory/likes-tea.md"), teaMemory)

	// users remove itself signals the daemon it finds in the ROOT lock;
	// send one more to be sure of a re-read either way.
	runCmd(t, "users", "remove", root, "bob")
	cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), "users re-read") {
		if time.Now().After(deadline) {
			t.Fatalf("no re-read after SIGHUP:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), `msg="user removed" user=bob`) {
		t.Fatalf("SIGHUP did not drop bob:\n%s", logs.String())
	}
	stopMindmount(t, cmd, logs)
	if mounted(mnt) {
		t.Fatal("still mounted after SIGTERM")
	}
	if log := gitLog(t, host.UserDir(root, "alice"), "-1", "--format=%s"); !strings.Contains(log, "likes-tea.md") {
		t.Fatalf("alice's pending change not committed at SIGTERM: %s\n%s", log, logs.String())
	}
	ents, _ := os.ReadDir(filepath.Join(root, host.RemovedDir))
	if len(ents) != 1 {
		t.Fatalf("removed/: %v", ents)
	}
	if log := gitLog(t, filepath.Join(root, host.RemovedDir, ents[0].Name()), "-1", "--format=%s"); !strings.Contains(log, "likes-tea.md") {
		t.Fatalf("bob's pending change not committed when he was removed: %s", log)
	}
}

// fusermount3 -u from outside: the daemon notices, commits what is
// pending and exits non-zero, for serve and for mount.
func TestOutsideUnmountNoticed(t *testing.T) {
	requireRootFUSE(t)
	unmount := func(mnt string) {
		t.Helper()
		if out, err := exec.Command("fusermount3", "-u", mnt).CombinedOutput(); err != nil {
			if uerr := syscall.Unmount(mnt, 0); uerr != nil {
				t.Fatalf("unmount from outside: %v / %v\n%s", err, uerr, out)
			}
		}
	}
	// Under serve, each user's mount is its own: the user's worker
	// notices, commits what is pending and exits; the daemon mounts the
	// user again with a new worker, and the other users never notice.
	t.Run("serve", func(t *testing.T) {
		root := serveRoot(t)
		_, logs, mnt := startServeBinary(t, root, "--debounce", "1h", "--max-wait", "1h")
		writeAs(t, aliceUID, filepath.Join(mnt, "alice/user_memory/likes-tea.md"), teaMemory)
		before := workerOf(t, "alice", root)
		unmount(filepath.Join(mnt, "alice"))
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(gitLog(t, host.UserDir(root, "alice"), "-1", "--format=%s"), "likes-tea.md") {
			if time.Now().After(deadline) {
				t.Fatalf("pending change lost after an outside unmount:\n%s", logs)
			}
			time.Sleep(20 * time.Millisecond)
		}
		waitFor(t, func() bool {
			_, err := as(aliceUID, "cat", filepath.Join(mnt, "alice/user_memory/likes-tea.md"))
			return err == nil && mounted(filepath.Join(mnt, "alice"))
		}, "alice mounted again")
		if after := workerOf(t, "alice", root); after == before {
			t.Fatalf("alice is served by the same worker %d", after)
		}
		if _, err := os.ReadFile(filepath.Join(mnt, "bob/user.md")); err != nil {
			t.Fatalf("bob beside alice's unmount: %v", err)
		}
	})
	t.Run("mount", func(t *testing.T) {
		root := serveRoot(t)
		repo := host.UserDir(root, "alice")
		mnt := filepath.Join(t.TempDir(), "mnt")
		os.Mkdir(mnt, 0o755)
		cmd, logs := startMindmount(t, noModel, "mindmount: mounted "+repo+" at "+mnt, "mount", repo, mnt)
		unmount(mnt)
		if err := waitExit(t, cmd, logs); err == nil || !strings.Contains(logs.String(), "unmounted from outside") {
			t.Fatalf("mount after an outside unmount: %v\n%s", err, logs.String())
		}
	})
}

// Two daemons on one ROOT, or mindmount mount on a repository mindmount serve
// has loaded, are refused with a clear error.
func TestServeSecondDaemonRefused(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	_, _, mnt := startServeBinary(t, root)
	var errb bytes.Buffer
	cmd := exec.Command(mindmountBinary(t), "serve", "--root", root, "--http", "127.0.0.1:0")
	cmd.Stderr = &errb
	if err := cmd.Run(); err == nil || !strings.Contains(errb.String(), "another mindmount serve is running") {
		t.Fatalf("second serve: %v\n%s", err, errb.String())
	}
	if _, err := os.ReadFile(filepath.Join(mnt, "alice/user.md")); err != nil { // loads alice
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "m2")
	os.Mkdir(other, 0o755)
	errb.Reset()
	cmd = exec.Command(mindmountBinary(t), "mount", host.UserDir(root, "alice"), other)
	cmd.Stderr = &errb
	if err := cmd.Run(); err == nil || !strings.Contains(errb.String(), "pid") {
		t.Fatalf("mount of a served repository: %v\n%s", err, errb.String())
	}
}
