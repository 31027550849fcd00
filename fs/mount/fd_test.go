package mount

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// nsHelper marks the re-executed test that runs in a private mount
// namespace: what it mounts, by mistake or not, never reaches the host.
const nsHelper = "MINDMOUNT_FS_MOUNT_NS_HELPER"

// TestPassedFdMountsOnlyAtItsMountpoint: a mount made by a parent
// (MountFd) and served by a process that holds CAP_SYS_ADMIN, as root,
// through "/dev/fd/N". go-fuse tries a direct mount of its mountpoint
// before it recognises that form: with one, "/dev/fd/N" — which resolves
// to /dev/fuse — would get a mount of its own, and every FUSE user of the
// host would get EIO. The served mount answers, and nothing is mounted
// anywhere but its mountpoint. The test runs in a private mount namespace
// (unshare), so a failure does not break FUSE for the host.
func TestPassedFdMountsOnlyAtItsMountpoint(t *testing.T) {
	if os.Getenv(nsHelper) == "" {
		requireFUSE(t)
		if os.Geteuid() != 0 {
			t.Skip("needs root: the server holds CAP_SYS_ADMIN as serve's worker must not")
		}
		if _, err := exec.LookPath("unshare"); err != nil {
			t.Skip("needs unshare (util-linux) for a private mount namespace")
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "--",
			os.Args[0], "-test.run=^TestPassedFdMountsOnlyAtItsMountpoint$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), nsHelper+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestPassedFdMountsOnlyAtItsMountpoint") {
			t.Fatalf("in a private mount namespace: %v\n%s", err, out)
		}
		return
	}
	dir := newRepo(t, nil)
	mnt := t.TempDir()
	f, err := MountFd(dir, mnt, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := memgraph.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ls tracker.Listeners
	tr := tracker.New(g, r, tracker.Config{Debounce: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Listener: ls.Listener()})
	srv, _, err := mount(fmt.Sprintf("/dev/fd/%d", f.Fd()), deps{graph: g, tracker: tr, listen: ls.Add, search: searchFunc(g)}, Options{AllowOther: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		Detach(mnt)
		ClearStale("/dev/fuse")
		ended := make(chan struct{})
		go func() { srv.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Error("the server did not end after its mounts were detached")
		}
	})
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var ours int
	for _, line := range strings.Split(string(info), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 {
			continue
		}
		at := unescapeMount(f[4])
		if at == "/dev/fuse" || strings.HasPrefix(at, "/dev/fd") {
			t.Errorf("a mount on %s: %s", at, line)
		}
		// Other tests' mounts, copied into this namespace, are listed
		// too: this one's is at mnt, or names dir as its source.
		if len(g) > 1 && g[1] == dir && at != mnt {
			t.Errorf("a mount of %s outside its mountpoint %s: %s", dir, mnt, line)
		}
		if at == mnt {
			ours++
		}
	}
	if ours != 1 {
		t.Errorf("%d mounts at %s, want one", ours, mnt)
	}
	if _, ok := ConnOf(mnt); !ok {
		t.Errorf("ConnOf(%s) does not find the mount", mnt)
	}
	if t.Failed() {
		return // a read would wait for a server that serves another mount
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "user.md")); err != nil || !strings.Contains(string(b), "Ada") {
		t.Fatalf("the mount does not answer: %v %q", err, b)
	}
}
