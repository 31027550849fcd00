package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/host"
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
	// The users' workers run as the users: they must reach ROOT.
	reachable(root)
	runCmd(t, "users", "add", root, "alice", "--uid", itoa(aliceUID), "--name", "Alice")
	runCmd(t, "users", "add", root, "bob", "--uid", itoa(bobUID))
	return root
}

// reachable lets every user traverse dir and the folders above it (the
// tests' temporary folders are 0700): the users' workers and shells must
// reach ROOT and MNT.
func reachable(dir string) {
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(d, fi.Mode().Perm()|0o055)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// served is a running mindmount serve (the built binary) with its mount.
type served struct {
	cmd  *exec.Cmd
	logs *logBuffer
	mnt  string
	root string
}

// serveOpts are the knobs the tests turn.
type serveOpts struct {
	debounce time.Duration
	extra    []string
}

// startServe runs mindmount serve --root root --mount MNT (the built
// binary: each user's worker is that binary, started as the user).
func startServe(t *testing.T, root string, o serveOpts) *served {
	t.Helper()
	if o.debounce == 0 {
		o.debounce = 50 * time.Millisecond
	}
	args := append([]string{"--debounce", o.debounce.String(), "--max-wait", o.debounce.String()}, o.extra...)
	cmd, logs, mnt := startServeBinary(t, root, args...)
	return &served{cmd: cmd, logs: logs, mnt: mnt, root: root}
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
	reachable(tmp)
	return mnt
}

// as runs argv as uid (gid the same, no supplementary groups).
func as(uid int, argv ...string) (string, error) {
	args := append([]string{"--reuid", itoa(uid), "--regid", itoa(uid), "--clear-groups", "--"}, argv...)
	out, err := exec.Command("setpriv", args...).CombinedOutput()
	return string(out), err
}

// waitCommit waits until the last commit of user id's repository that
// touched rel (any, when rel is "") holds want in its message or patch.
func (s *served) waitCommit(t *testing.T, id, rel, want string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		args := []string{"-1", "--format=%an%n%B", "-p"}
		if rel != "" {
			args = append(args, "--", rel)
		}
		log := gitLog(t, host.UserDir(s.root, id), args...)
		if strings.Contains(log, want) {
			return log
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no commit with %q:\n%s\n%s", id, want, log, s.logs)
		}
		time.Sleep(30 * time.Millisecond)
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

// workerOf returns the pid of user id's worker process: a "mindmount
// worker" (a spare, given its user by serve) holding the user's repository
// open.
func workerOf(t *testing.T, id string, root string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, pid := range workerPids() {
			if holds(pid, host.UserDir(root, id)) {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no worker for %s", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// workerPids lists every "mindmount worker" process.
func workerPids() []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if args := strings.Split(string(b), "\x00"); len(args) > 2 && args[1] == "worker" {
			out = append(out, pid)
		}
	}
	return out
}

// holds reports whether process pid has dir itself open.
func holds(pid int, dir string) bool {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && l == dir {
			return true
		}
	}
	return false
}

// Two users side by side: each MNT/<id> is what mindmount mount shows for
// that repository, owned by the user and 0700, served by a worker that
// runs as the user; writes land in the right repository.
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
		status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", workerOf(t, u.id, root)))
		if !strings.Contains(string(status), fmt.Sprintf("Uid:\t%d\t%d\t%d\t%d", u.uid, u.uid, u.uid, u.uid)) {
			t.Fatalf("%s's worker does not run as %d:\n%s", u.id, u.uid, status)
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
		log := s.waitCommit(t, id, "user_memory/likes-tea.md", "used, 01.12.26")
		if !strings.Contains(log, "Likes tea ("+id+")") || !strings.Contains(log, "Mindmount-User: "+id) {
			t.Fatalf("%s's commit:\n%s", id, log)
		}
	}
}

// A caller whose uid is neither root nor the user's is refused, even on
// entries the kernel already knows from root's look; MNT itself cannot be
// listed by users (0711), so no one learns who the others are.
func TestServeForeignUIDRefused(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	s := startServe(t, root, serveOpts{})
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
		if err == nil || !strings.Contains(out, "Permission denied") {
			t.Errorf("bob: %v: err %v, output %q; want Permission denied", argv, err, out)
		}
	}
	aliceDir := host.UserDir(root, "alice")
	if b, _ := os.ReadFile(filepath.Join(aliceDir, "user.md")); strings.HasSuffix(string(b), "x\n") {
		t.Errorf("bob appended to alice's user.md:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(aliceDir, "user_memory/evil.md")); err == nil {
		t.Error("bob created a file in alice's memory")
	}
	if out, err := as(aliceUID, "cat", alice+"/user.md"); err != nil {
		t.Fatalf("alice reads her own: %v\n%s", err, out)
	}
	for _, uid := range []int{aliceUID, carolUID} {
		if out, err := as(uid, "ls", "-A", s.mnt); err == nil {
			t.Errorf("ls MNT as %d listed the users: %q", uid, out)
		}
	}
	ents, err := os.ReadDir(s.mnt)
	if err != nil || len(ents) != 2 {
		t.Errorf("ls MNT as root: %v %v", ents, err)
	}
	if _, err := os.Stat(filepath.Join(s.mnt, "nobody")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unknown user: %v, want ENOENT", err)
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
// without a restart (the registry is re-read when it changes); the removed
// repository is moved aside, its mount gone.
func TestServeAddRemoveWhileRunning(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	s := startServe(t, root, serveOpts{})
	carol := filepath.Join(s.mnt, "carol")
	if _, err := os.Stat(carol); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("carol before add: %v", err)
	}
	runCmd(t, "users", "add", root, "carol", "--uid", itoa(carolUID))
	s.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, func() bool { _, err := as(carolUID, "cat", carol+"/user.md"); return err == nil }, "carol served")
	runCmd(t, "users", "remove", root, "bob")
	s.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, func() bool {
		ents, _ := os.ReadDir(filepath.Join(root, host.RemovedDir))
		return !mounted(filepath.Join(s.mnt, "bob")) && len(ents) == 1 && strings.HasPrefix(ents[0].Name(), "bob-")
	}, "bob unmounted and moved aside")
}

// A broken repository is not served (the log says why); the other users
// are unaffected.
func TestServeBrokenRepositoryIsolated(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	bobDir := host.UserDir(root, "bob")
	os.Remove(filepath.Join(bobDir, "user.md"))
	os.Remove(filepath.Join(bobDir, "character.md"))
	s := startServe(t, root, serveOpts{})
	if _, err := os.ReadFile(filepath.Join(s.mnt, "alice", "CONTEXT.md")); err != nil {
		t.Fatalf("alice beside broken bob: %v", err)
	}
	if mounted(filepath.Join(s.mnt, "bob")) {
		t.Fatal("broken bob is mounted")
	}
	if !strings.Contains(s.logs.String(), "not a mindmount repository") {
		t.Fatalf("the log does not say why bob is not served:\n%s", s.logs)
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
	// Ids of their own (the registry refuses root's and shared ones);
	// a daemon that is not root serves everyone as itself.
	uid1, uid2 := strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getuid())
	if os.Getuid() == 0 {
		uid1, uid2 = itoa(aliceUID), itoa(bobUID)
	}
	runCmd(t, "users", "add", root, "alice.bob", "--uid", uid1)
	runCmd(t, "users", "add", root, "alice_bob", "--uid", uid2, "--name", "AB")
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
	uid := os.Getuid()
	if uid == 0 {
		uid = bobUID // the registry refuses root's ids
	}
	runCmd(t, "users", "add", root, "bob", "--uid", itoa(uid))
	ws, err := host.NewWorkers(host.WorkersConfig{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close(context.Background())
	bob := host.UserDir(root, "bob")
	for _, args := range [][]string{{"watch", bob}, {"mount", bob, t.TempDir()}, {"mcp", bob}} {
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), "served by mindmount serve") {
			t.Errorf("mindmount %s while served: exit %d\n%s", strings.Join(args, " "), code, errb.String())
		}
	}
}

// TestServeRenameAcrossUsers is issue 21's second planted bug as it
// stands now: each user is a mount of its own, so a rename from
// MNT/alice into MNT/bob — a file or a folder, either way, by alice or
// even by root — never reaches a daemon: the kernel refuses it (EXDEV
// across mounts, EACCES for alice at bob's 0700 top), and nothing moves.
func TestServeRenameAcrossUsers(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	s := startServe(t, root, serveOpts{})
	alice, bob := filepath.Join(s.mnt, "alice"), filepath.Join(s.mnt, "bob")
	writeAs(t, aliceUID, alice+"/user_memory/likes-tea.md", teaMemory)
	writeAs(t, bobUID, bob+"/user_memory/likes-coffee.md", strings.Replace(teaMemory, "tea", "coffee", -1))
	for _, mv := range []struct{ from, to string }{
		{alice + "/user_memory/likes-tea.md", bob + "/user_memory/likes-tea.md"},
		{bob + "/user_memory/likes-coffee.md", alice + "/user_memory/likes-coffee.md"},
		{alice + "/user_memory", bob + "/alices"},
	} {
		if err := os.Rename(mv.from, mv.to); !errors.Is(err, syscall.EXDEV) {
			t.Errorf("root: rename %s %s: %v, want EXDEV", mv.from, mv.to, err)
		}
		out, err := as(aliceUID, "mv", mv.from, mv.to)
		if err == nil {
			t.Errorf("alice: mv %s %s succeeded", mv.from, mv.to)
		}
		_ = out
	}
	for _, p := range []string{alice + "/user_memory/likes-tea.md", bob + "/user_memory/likes-coffee.md"} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s moved: %v", p, err)
		}
	}
	for _, p := range []string{bob + "/user_memory/likes-tea.md", alice + "/user_memory/likes-coffee.md", bob + "/alices"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s appeared", p)
		}
	}
}

// TestPushDelay: a cluster's nodes push 2 s after a commit unless
// --push-delay says otherwise; a single host keeps the loop's default.
func TestPushDelay(t *testing.T) {
	for _, c := range []struct {
		cluster bool
		asked   time.Duration
		want    time.Duration
	}{
		{false, 0, 0},
		{true, 0, 2 * time.Second},
		{true, 500 * time.Millisecond, 500 * time.Millisecond},
		{false, time.Second, time.Second},
	} {
		if got := pushDelay(c.cluster, c.asked); got != c.want {
			t.Errorf("pushDelay(%v, %s) = %s, want %s", c.cluster, c.asked, got, c.want)
		}
	}
}
