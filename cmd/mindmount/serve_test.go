package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/cmd/mindmount/host"
	enfs "github.com/mindmount/mindmount/fs"
)

// Test users: uids no account has, so that only the daemon's mapping
// decides what they may do.
const (
	aliceUID = 2101
	bobUID   = 2102
	carolUID = 2103
)

func requireRootFUSE(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the multi-user mount hands directories to other uids")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux) to act as another uid")
	}
}

// serveRoot makes a serve ROOT with alice and bob.
func serveRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	os.Chmod(root, 0o755)
	runCmd(t, "users", "add", root, "alice", "--uid", itoa(aliceUID), "--name", "Alice")
	runCmd(t, "users", "add", root, "bob", "--uid", itoa(bobUID))
	return root
}

func itoa(n int) string { return strconv.Itoa(n) }

type served struct {
	h   *host.Host
	us  *enfs.UsersServer
	mnt string
	evs chan host.Event
}

// serveOpts are the knobs the tests turn.
type serveOpts struct {
	debounce, unloadAfter time.Duration
	noKernelChecks        bool
}

// startServe serves root in-process as mindmount serve does, mounted in
// t.TempDir().
func startServe(t *testing.T, root string, o serveOpts) *served {
	t.Helper()
	if o.debounce == 0 {
		o.debounce = 50 * time.Millisecond
	}
	if o.unloadAfter == 0 {
		o.unloadAfter = time.Hour
	}
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("MINDMOUNT_TEST_FUSE_DEBUG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	d := daemonFlags{debounce: o.debounce, maxWait: o.debounce}
	h, err := host.New(host.Config{Root: root, Runtime: d.runtimeConfig(false, log), UnloadAfter: o.unloadAfter, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	s := &served{h: h, mnt: mountDir(t), evs: make(chan host.Event, 256)}
	h.Subscribe(func(ev host.Event) {
		select {
		case s.evs <- ev:
		default:
		}
	})
	s.us, err = serveMount(h, s.mnt, enfs.UsersOptions{NoKernelChecks: o.noKernelChecks, Options: enfs.Options{Logger: log, Debug: os.Getenv("MINDMOUNT_TEST_FUSE_DEBUG") != ""}})
	if err != nil {
		h.Close(context.Background())
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	t.Cleanup(func() {
		s.us.Unmount()
		cancel()
		<-done
		h.Close(context.Background())
	})
	return s
}

// mountDir is an empty mountpoint in t.TempDir() that the test uids can
// reach (t.TempDir() and its parent are 0700).
func mountDir(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	mnt := filepath.Join(tmp, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmp, 0o755)
	os.Chmod(filepath.Dir(tmp), 0o755)
	return mnt
}

// as runs argv as uid (gid the same, no supplementary groups).
func as(uid int, argv ...string) (string, error) {
	args := append([]string{"--reuid", itoa(uid), "--regid", itoa(uid), "--clear-groups", "--"}, argv...)
	out, err := exec.Command("setpriv", args...).CombinedOutput()
	return string(out), err
}

// settle waits until every change of user id is committed.
func (s *served) settle(t *testing.T, id string) {
	t.Helper()
	rt, release, err := s.h.Acquire(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rt.Tracker.Settle(ctx); err != nil {
		t.Fatal(err)
	}
}

func gitLog(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-c", "safe.directory=*", "-C", dir, "log"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git log: %v\n%s", err, out)
	}
	return string(out)
}

const teaMemory = "---\ndescription: Likes tea\n---\n# Likes tea\n\n## Fact\nYou like tea.\n\n## Access log\n"

// Two users side by side: each directory is what mindmount mount shows for
// that repository, owned by the user, and writes land in the right one.
func TestServeTwoUsersSideBySide(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	s := startServe(t, root, serveOpts{})
	for _, u := range []struct {
		id  string
		uid int
	}{{"alice", aliceUID}, {"bob", bobUID}} {
		dir := filepath.Join(s.mnt, u.id)
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != u.uid || int(st.Gid) != u.uid || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: owner %d:%d mode %v, want %d:%d 0700", u.id, st.Uid, st.Gid, fi.Mode().Perm(), u.uid, u.uid)
		}
		for _, f := range []string{"user_memory.md", "character_memory.md", "CONTEXT.md", ".mindmount/status", ".mindmount/search/tea", "user.md"} {
			if _, err := os.ReadFile(filepath.Join(dir, f)); err != nil {
				t.Fatalf("%s/%s: %v", u.id, f, err)
			}
		}
	}
	for _, u := range []struct {
		id  string
		uid int
	}{{"alice", aliceUID}, {"bob", bobUID}} {
		dir := filepath.Join(s.mnt, u.id)
		cmd := exec.Command("setpriv", "--reuid", itoa(u.uid), "--regid", itoa(u.uid), "--clear-groups", "--", "sh", "-c", "cat > "+dir+"/user_memory/likes-tea.md && echo 'used, 01.12.26' >> "+dir+"/user_memory/likes-tea.md")
		cmd.Stdin = strings.NewReader(strings.Replace(teaMemory, "Likes tea", "Likes tea ("+u.id+")", 1))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s writes: %v\n%s", u.id, err, out)
		}
		idx, err := os.ReadFile(filepath.Join(dir, "user_memory.md"))
		if err != nil || !strings.Contains(string(idx), "Likes tea ("+u.id+") (uses: 1)") {
			t.Fatalf("%s index after write: %v\n%s", u.id, err, idx)
		}
	}
	for _, id := range []string{"alice", "bob"} {
		s.settle(t, id)
		log := gitLog(t, host.UserDir(root, id), "-1", "--format=%B", "-p")
		if !strings.Contains(log, "Likes tea ("+id+")") || !strings.Contains(log, "Mindmount-User: "+id) {
			t.Fatalf("%s's commit:\n%s", id, log)
		}
	}
}

// A caller whose uid is neither root nor the user's is refused by the
// daemon itself (no default_permissions here), even on entries the kernel
// already knows from root's look; ls MNT shows each caller its own user.
func TestServeForeignUIDRefused(t *testing.T) {
	requireRootFUSE(t)
	for _, kernel := range []bool{false, true} {
		t.Run(map[bool]string{false: "daemon-only", true: "with-kernel-checks"}[kernel], func(t *testing.T) {
			root := serveRoot(t)
			s := startServe(t, root, serveOpts{noKernelChecks: !kernel})
			alice := filepath.Join(s.mnt, "alice")
			// Root looks first: the kernel now caches these entries.
			if _, err := os.ReadFile(filepath.Join(alice, "user.md")); err != nil {
				t.Fatal(err)
			}
			os.ReadDir(alice)
			for _, argv := range [][]string{
				{"cat", alice + "/user.md"},
				{"cat", alice + "/user_memory.md"},
				{"ls", alice},
				{"stat", alice + "/user.md"},
				{"sh", "-c", "echo x >> " + alice + "/user.md"},
				{"touch", alice + "/user_memory/evil.md"},
			} {
				out, err := as(bobUID, argv...)
				// Without OPEN (the mount's default) and without the
				// kernel's checks, open(2) of a cached entry succeeds in
				// the kernel and the daemon refuses the WRITE itself,
				// which write(2) reports as EIO.
				if err == nil || !strings.Contains(out, "Permission denied") && !strings.Contains(out, "I/O error") {
					t.Errorf("bob: %v: err %v, output %q; want Permission denied", argv, err, out)
				}
			}
			aliceDir := host.UserDir(root, "alice")
			if b, _ := os.ReadFile(filepath.Join(aliceDir, "user.md")); strings.Contains(string(b), "x\n") && strings.HasSuffix(string(b), "x\n") {
				t.Errorf("bob appended to alice's user.md:\n%s", b)
			}
			if _, err := os.Stat(filepath.Join(aliceDir, "user_memory/evil.md")); err == nil {
				t.Error("bob created a file in alice's memory")
			}
			if out, err := as(aliceUID, "cat", alice+"/user.md"); err != nil {
				t.Fatalf("alice reads her own: %v\n%s", err, out)
			}
			list := func(uid int) []string {
				out, err := as(uid, "ls", "-A", s.mnt)
				if err != nil {
					t.Fatalf("ls as %d: %v\n%s", uid, err, out)
				}
				f := strings.Fields(out)
				sort.Strings(f)
				return f
			}
			if got := strings.Join(list(aliceUID), " "); got != "alice" {
				t.Errorf("ls MNT as alice: %q", got)
			}
			if got := strings.Join(list(carolUID), " "); got != "" {
				t.Errorf("ls MNT as a stranger: %q", got)
			}
			if got := strings.Join(list(0), " "); got != ".mindmount alice bob" {
				t.Errorf("ls MNT as root: %q", got)
			}
			if out, err := as(aliceUID, "cat", s.mnt+"/.mindmount/status"); err == nil {
				t.Errorf("daemon status readable by alice:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(s.mnt, "nobody")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("unknown user: %v, want ENOENT", err)
			}
			if b, err := os.ReadFile(filepath.Join(s.mnt, ".mindmount/status")); err != nil || !strings.Contains(string(b), "alice") {
				t.Errorf("root reads the daemon status: %v\n%q", err, b)
			}
		})
	}
}

// A user idle past --unload-after is unloaded with its pending change
// committed (the debounce is an hour: only the unload commits), and the
// next access through the mount loads it again.
func TestServeLazyLoadAndUnload(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	s := startServe(t, root, serveOpts{debounce: time.Hour, unloadAfter: 200 * time.Millisecond})
	if u, _ := s.h.Lookup("alice"); u.Loaded {
		t.Fatal("alice loaded before any access")
	}
	alice := filepath.Join(s.mnt, "alice")
	writeAs(t, aliceUID, alice+"/user_memory/likes-tea.md", teaMemory)
	if u, _ := s.h.Lookup("bob"); u.Loaded {
		t.Fatal("bob loaded by alice's access")
	}
	waitEvent(t, s.evs, "alice", host.Unloaded)
	log := gitLog(t, host.UserDir(root, "alice"), "-1", "--format=%s")
	if !strings.Contains(log, "likes-tea.md") {
		t.Fatalf("pending change not committed on unload: %s", log)
	}
	idx, err := os.ReadFile(filepath.Join(alice, "user_memory.md"))
	if err != nil || !strings.Contains(string(idx), "Likes tea") {
		t.Fatalf("index after reload: %v\n%s", err, idx)
	}
	waitEvent(t, s.evs, "alice", host.Loaded)
}

func waitEvent(t *testing.T, ch <-chan host.Event, id string, kind host.EventKind) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-ch:
			if ev.ID == id && ev.Kind == kind {
				return
			}
		case <-deadline:
			t.Fatalf("no event %v for %s", kind, id)
		}
	}
}

// writeAs writes data to path as uid, through a shell's redirection.
func writeAs(t *testing.T, uid int, path, data string) {
	t.Helper()
	cmd := exec.Command("setpriv", "--reuid", itoa(uid), "--regid", itoa(uid), "--clear-groups", "--", "sh", "-c", `cat > "$1"`, "sh", path)
	cmd.Stdin = strings.NewReader(data)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("write %s as %d: %v\n%s", path, uid, err, out)
	}
}

// Users added and removed while the daemon runs appear and disappear
// without a restart; the removed repository is moved aside.
func TestServeAddRemoveWhileRunning(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	s := startServe(t, root, serveOpts{})
	carol := filepath.Join(s.mnt, "carol")
	if _, err := os.Stat(carol); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("carol before add: %v", err)
	}
	runCmd(t, "users", "add", root, "carol", "--uid", itoa(carolUID))
	if out, err := as(carolUID, "cat", carol+"/user.md"); err != nil {
		t.Fatalf("carol after add: %v\n%s", err, out)
	}
	os.ReadDir(filepath.Join(s.mnt, "bob"))
	runCmd(t, "users", "remove", root, "bob")
	if err := s.h.Reload(); err != nil { // what SIGHUP does
		t.Fatal(err)
	}
	// The kernel is told from a goroutine of the daemon's: wait for it.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, err := os.Stat(filepath.Join(s.mnt, "bob"))
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("bob after remove: %v", err)
		}
	}
	ents, _ := os.ReadDir(filepath.Join(root, host.RemovedDir))
	if len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "bob-") {
		t.Fatalf("removed/: %v", ents)
	}
}

// A broken repository shows only .mindmount/status saying why; the other
// users are unaffected.
func TestServeBrokenRepositoryIsolated(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	bobDir := host.UserDir(root, "bob")
	os.Remove(filepath.Join(bobDir, "user.md"))
	os.Remove(filepath.Join(bobDir, "character.md"))
	s := startServe(t, root, serveOpts{})
	bob := filepath.Join(s.mnt, "bob")
	ents, err := os.ReadDir(bob)
	if err != nil || len(ents) != 1 || ents[0].Name() != ".mindmount" {
		t.Fatalf("broken bob lists %v (%v), want only .mindmount", ents, err)
	}
	st, err := os.ReadFile(filepath.Join(bob, ".mindmount/status"))
	if err != nil || !strings.Contains(string(st), "not a mindmount repository") {
		t.Fatalf("bob's status: %v\n%s", err, st)
	}
	if out, err := as(bobUID, "cat", bob+"/.mindmount/status"); err != nil {
		t.Fatalf("bob reads why: %v\n%s", err, out)
	}
	if _, err := os.ReadFile(filepath.Join(s.mnt, "alice", "CONTEXT.md")); err != nil {
		t.Fatalf("alice beside broken bob: %v", err)
	}
}

// mindmount users: a bad ID is refused with the grammar, list shows the
// registry, remove without a daemon moves the repository aside at once.
func TestUsersCommand(t *testing.T) {
	root := t.TempDir()
	var out, errb bytes.Buffer
	if code := run([]string{"users", "add", root, "Alice"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "upper case") {
		t.Fatalf("users add Alice: exit %d\n%s", code, errb.String())
	}
	uid := strconv.Itoa(os.Getuid())
	runCmd(t, "users", "add", root, "alice.bob", "--uid", uid)
	runCmd(t, "users", "add", root, "alice_bob", "--uid", uid, "--name", "AB")
	list := runCmd(t, "users", "list", root)
	if !strings.Contains(list, "alice.bob") || !strings.Contains(list, "alice_bob") || !strings.Contains(list, `"AB"`) {
		t.Fatalf("users list:\n%s", list)
	}
	if host.UserDir(root, "alice.bob") == host.UserDir(root, "alice_bob") {
		t.Fatal("two IDs share a repository")
	}
	runCmd(t, "users", "remove", root, "alice.bob")
	if _, err := os.Stat(host.UserDir(root, "alice.bob")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("repository still in users/: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(root, host.RemovedDir)); len(ents) != 1 {
		t.Fatalf("removed/: %v", ents)
	}
	if st := runCmd(t, "status", "--root", root); !strings.Contains(st, "alice_bob") || !strings.Contains(st, "not running") {
		t.Fatalf("status --root:\n%s", st)
	}
}

// TestSingleDaemonsRefuseAServedRepository: while serve owns ROOT, watch,
// mount and mcp on a user's repository — one never loaded — are refused
// with a message naming the daemon, and nothing is committed by them.
func TestSingleDaemonsRefuseAServedRepository(t *testing.T) {
	root := t.TempDir()
	runCmd(t, "users", "add", root, "bob", "--uid", itoa(os.Getuid()))
	h, err := host.New(host.Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	bob := host.UserDir(root, "bob")
	for _, args := range [][]string{{"watch", bob}, {"mount", bob, t.TempDir()}, {"mcp", bob}} {
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), "served by mindmount serve") {
			t.Errorf("mindmount %s while served: exit %d\n%s", strings.Join(args, " "), code, errb.String())
		}
	}
}
