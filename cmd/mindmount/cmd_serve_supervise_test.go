package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// startServeMountHTTP runs mindmount serve with a mount and the HTTP API
// on a free loopback port, and returns the mountpoint and the API's base
// URL, read from the readiness line.
func startServeMountHTTP(t *testing.T, root string, env []string, extra ...string) (*served, string) {
	t.Helper()
	mnt := mountDir(t)
	t.Cleanup(func() { detachUnder(mnt) })
	cmd, logs, line := startFirstLine(t, env, append([]string{"serve", "--root", root, "--mount", mnt, "--http", "127.0.0.1:0"}, extra...)...)
	prefix := "mindmount: serving " + root + " at " + mnt + ", http on "
	addr, ok := strings.CutPrefix(line, prefix)
	if !ok {
		t.Fatalf("readiness line %q, want %q + the address\n%s", line, prefix, logs)
	}
	return &served{cmd: cmd, logs: logs, mnt: mnt, root: root}, "http://" + addr
}

// ownUID gives a test user a uid of its own when the tests run as root
// (serve refuses a user registered with uid 0); otherwise none: the user
// is the tests' own uid.
func ownUID(uid int) []string {
	if os.Geteuid() != 0 {
		return nil
	}
	return []string{"--uid", itoa(uid)}
}

// within runs argv as uid and gives up (SIGKILL) after d: a look at a
// mount whose server is gone must end, one way or the other.
func within(d time.Duration, uid int, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	args := append([]string{"--reuid", itoa(uid), "--regid", itoa(uid), "--clear-groups", "--"}, argv...)
	out, err := exec.CommandContext(ctx, "setpriv", args...).CombinedOutput()
	if ctx.Err() != nil {
		return string(out), fmt.Errorf("still waiting after %s: %w", d, ctx.Err())
	}
	return string(out), err
}

// TestServeWorkerKilledUnderLoad: alice's worker is killed (SIGKILL)
// while her requests come in over HTTP and through her mount. Nothing
// waits for ever: every look at her mount ends, /health and bob (mount
// and HTTP) keep answering, and alice is served again by a new worker.
// Then, with bob's worker stopped dead (SIGSTOP: it will never commit
// or exit by itself), SIGTERM still ends the daemon. Each wait has a
// deadline that stops a hang; none is a timing goal.
func TestServeWorkerKilledUnderLoad(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	aliceTok := strings.TrimSpace(runCmd(t, "users", "token", root, "alice"))
	bobTok := strings.TrimSpace(runCmd(t, "users", "token", root, "bob"))
	s, base := startServeMountHTTP(t, root, append(noModel, "MINDMOUNT_API_KEY="), "--debounce", "50ms", "--max-wait", "50ms")
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(path, tok string) (int, error) {
		req, _ := http.NewRequest("GET", base+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	alice := filepath.Join(s.mnt, "alice")
	old := workerOf(t, "alice", root)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var answered atomic.Int64
	var hung atomic.Value
	for i := 0; i < 3; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if code, err := get("/v1/recall?userId=alice&q=tea", aliceTok); err == nil && code == http.StatusOK {
					answered.Add(1)
				} else if err != nil && ctx.Err() == nil {
					hung.Store("alice's recall: " + err.Error())
				}
			}
		}()
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if _, err := within(15*time.Second, aliceUID, "cat", alice+"/user.md"); err != nil && strings.Contains(err.Error(), "still waiting") {
					hung.Store("a read of alice's mount: " + err.Error())
				}
			}
		}()
	}
	waitFor(t, func() bool { return answered.Load() >= 5 }, "alice's requests answered before the kill")
	// One look at alice's mount is surely in flight when her worker
	// dies: the worker is stopped first, and the look waits in the
	// kernel for its answer.
	if err := syscall.Kill(old, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	pctx, pcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer pcancel()
	probe := exec.CommandContext(pctx, "setpriv", "--reuid", itoa(aliceUID), "--regid", itoa(aliceUID), "--clear-groups", "--", "stat", alice+"/in-flight")
	if err := probe.Start(); err != nil {
		t.Fatal(err)
	}
	probed := make(chan struct{})
	go func() { probe.Wait(); close(probed) }()
	waitFor(t, func() bool { return strings.TrimSpace(readProc(probe.Process.Pid, "wchan")) == "request_wait_answer" }, "a look at alice's mount waiting for her worker")
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-probed
	if pctx.Err() != nil {
		t.Fatalf("a look at alice's mount still waited for her dead worker 30s after its death\n%s", s.logs)
	}
	// While alice has no worker, and once she has a new one, the daemon,
	// /health and bob answer.
	served := func() bool {
		if code, err := get("/health", ""); err != nil || code != http.StatusOK {
			t.Fatalf("/health after alice's worker was killed: %d %v\n%s", code, err, s.logs)
		}
		if out, err := within(15*time.Second, bobUID, "cat", s.mnt+"/bob/user.md"); err != nil {
			t.Fatalf("bob's mount after alice's worker was killed: %v\n%s\n%s", err, out, s.logs)
		}
		if code, err := get("/v1/recall?userId=bob&q=tea", bobTok); err != nil || code != http.StatusOK {
			t.Fatalf("bob's recall after alice's worker was killed: %d %v\n%s", code, err, s.logs)
		}
		for _, pid := range workerPids() {
			if pid != old && holds(pid, filepath.Join(root, "users", "alice")) {
				_, err := within(15*time.Second, aliceUID, "cat", alice+"/user.md")
				return err == nil
			}
		}
		return false
	}
	waitFor(t, served, "alice served by a new worker")
	n := answered.Load()
	waitFor(t, func() bool { return answered.Load() > n }, "alice's requests answered again")
	cancel()
	loadDone := make(chan struct{})
	go func() { wg.Wait(); close(loadDone) }()
	select {
	case <-loadDone:
	case <-time.After(30 * time.Second):
		t.Fatalf("alice's requests still waiting after the load stopped\n%s", s.logs)
	}
	if h := hung.Load(); h != nil {
		t.Fatalf("%s\n%s", h, s.logs)
	}
	if !strings.Contains(s.logs.String(), `user's worker exited by itself; starting it again" user=alice exit="signal: killed"`) {
		t.Errorf("the log does not say alice's worker died and how:\n%s", s.logs)
	}

	// A worker that will never end by itself does not keep the daemon.
	bob := workerOf(t, "bob", root)
	syscall.Kill(bob, syscall.SIGSTOP)
	defer syscall.Kill(bob, syscall.SIGCONT)
	s.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- s.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve still running 30s after SIGTERM, with bob's worker stopped\n%s", s.logs)
	}
	if mounted(s.mnt + "/alice") {
		t.Error("alice's mount stayed after serve ended")
	}
}

// TestServeCrashLoopHeldBack: a worker that ends the same way three
// times in a row is not started again for a while; /health says how it
// ended (never whom), the daemon's log says whom and why, and the other
// users are served.
func TestServeCrashLoopHeldBack(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	s, base := startServeMountHTTP(t, root, append(noModel, "MINDMOUNT_API_KEY="))
	// Each time, the worker the daemon says serves alice (once it is
	// ready: one killed while starting fails another way).
	started := regexp.MustCompile(`msg="user's worker started" user=alice uid=\d+ pid=(\d+)`)
	seen := map[int]bool{}
	for i := 0; i < 3; i++ {
		var pid int
		waitFor(t, func() bool {
			for _, m := range started.FindAllStringSubmatch(s.logs.String(), -1) {
				if p, _ := strconv.Atoi(m[1]); !seen[p] {
					pid = p
					return true
				}
			}
			return false
		}, fmt.Sprintf("alice's worker number %d", i+1))
		seen[pid] = true
		syscall.Kill(pid, syscall.SIGKILL)
	}
	var health struct {
		Status string `json:"status"`
		Held   []struct {
			Exit  string    `json:"exit"`
			Times int       `json:"times"`
			Until time.Time `json:"until"`
		} `json:"workersHeldBack"`
	}
	client := &http.Client{Timeout: 10 * time.Second}
	waitFor(t, func() bool {
		resp, err := client.Get(base + "/health")
		if err != nil {
			t.Fatalf("/health: %v", err)
		}
		defer resp.Body.Close()
		health.Held = nil
		json.NewDecoder(resp.Body).Decode(&health)
		return len(health.Held) == 1
	}, "/health reporting alice's worker held back")
	if h := health.Held[0]; h.Exit != "signal: killed" || h.Times != 3 || !h.Until.After(time.Now()) {
		t.Fatalf("/health: %+v", health)
	}
	// The operator's status names whom and why.
	if st := runCmd(t, "status", "--root", root); !regexp.MustCompile(`(?m)^alice .*held back until \d\d:\d\d:\d\d: signal: killed 3 times in a row`).MatchString(st) {
		t.Errorf("mindmount status --root does not say alice is held back and why:\n%s", st)
	}
	if !strings.Contains(s.logs.String(), `keeps ending the same way; not started again for a while" user=alice exit="signal: killed" times=3`) {
		t.Fatalf("the log does not say why alice is held back:\n%s", s.logs)
	}
	for _, p := range workerPids() {
		if !seen[p] && holds(p, filepath.Join(root, "users", "alice")) {
			t.Fatalf("alice's worker was started a fourth time (pid %d)\n%s", p, s.logs)
		}
	}
	if out, err := within(15*time.Second, bobUID, "cat", s.mnt+"/bob/user.md"); err != nil {
		t.Fatalf("bob while alice is held back: %v\n%s", err, out)
	}
	if out, err := within(15*time.Second, aliceUID, "cat", s.mnt+"/alice/user.md"); err == nil {
		t.Fatalf("alice's mount answers while her worker is held back: %s", out)
	}
	stopMindmount(t, s.cmd, s.logs)
}

// limitsOf reads the soft and hard columns of one limit of process pid
// (/proc/PID/limits), e.g. "Max data size".
func limitsOf(t *testing.T, pid int, name string) (soft, hard string) {
	t.Helper()
	for _, line := range strings.Split(readProc(pid, "limits"), "\n") {
		if rest, ok := strings.CutPrefix(line, name); ok {
			f := strings.Fields(rest)
			if len(f) >= 2 {
				return f[0], f[1]
			}
		}
	}
	t.Fatalf("no %q in /proc/%d/limits", name, pid)
	return "", ""
}

// TestServeWorkerDropsEverything: serve started with supplementary groups
// (root on a test machine has none, so the test gives it some) hands its
// users to workers that keep none of them, nor any capability; each
// worker's memory, open files and processes are bounded with the hard
// limit equal to the soft one, so the user cannot raise them.
func TestServeWorkerDropsEverything(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	mnt := mountDir(t)
	t.Cleanup(func() { detachUnder(mnt) })
	cmd := exec.Command(mindmountBinary(t), "serve", "--root", root, "--mount", mnt, "--user-memory", "400000000")
	cmd.Env = append(os.Environ(), noModel...)
	logs := new(logBuffer)
	cmd.Stderr = logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 0, Gid: 0, Groups: []uint32{4, 27, 100}}}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	ready := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		ready <- l
		io.Copy(io.Discard, out)
	}()
	select {
	case l := <-ready:
		if !strings.HasPrefix(l, "mindmount: serving") {
			t.Fatalf("readiness line %q\n%s", l, logs)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("no readiness line\n%s", logs)
	}
	if st := readProc(cmd.Process.Pid, "status"); !strings.Contains(st, "Groups:\t4 27 100") {
		t.Fatalf("serve does not run with the groups the test gave it:\n%s", st)
	}
	for _, id := range []string{"alice", "bob"} {
		pid := workerOf(t, id, root)
		st := readProc(pid, "status")
		if _, g, _ := strings.Cut(st, "\nGroups:"); strings.TrimSpace(strings.SplitN(g, "\n", 2)[0]) != "" {
			t.Errorf("%s's worker kept supplementary groups:\n%s", id, st)
		}
		if !strings.Contains(st, "CapEff:\t0000000000000000") || !strings.Contains(st, "CapPrm:\t0000000000000000") {
			t.Errorf("%s's worker kept capabilities:\n%s", id, st)
		}
		for _, l := range []struct{ name, want string }{
			{"Max open files", itoa(workerMaxFiles)},
			{"Max processes", itoa(workerMaxProcs)},
			{"Max data size", "400000000"},
		} {
			if l.name == "Max data size" && raceEnabled {
				continue // not applied under -race
			}
			if soft, hard := limitsOf(t, pid, l.name); soft != l.want || hard != l.want {
				t.Errorf("%s's worker: %s soft %s hard %s, want %s for both", id, l.name, soft, hard, l.want)
			}
		}
		// Where root may make cgroups, each worker has its own (what it
		// and its git use is bounded together, one user's apart).
		if hostHasCgroups() && !strings.Contains(readProc(pid, "cgroup"), "/mindmount/"+id+"\n") {
			t.Errorf("%s's worker is not in its own cgroup:\n%s", id, readProc(pid, "cgroup"))
		}
	}
	if out, err := within(15*time.Second, aliceUID, "cat", mnt+"/alice/user.md"); err != nil {
		t.Fatalf("alice's mount: %v\n%s", err, out)
	}
	// Served through the whole path, the users' mounts are at MNT/<id>
	// and nowhere else: none on /dev/fuse, which a worker mounting its
	// /dev/fd/N again would make.
	mounts := 0
	for _, line := range strings.Split(readProc(cmd.Process.Pid, "mountinfo"), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 {
			continue
		}
		// Other tests' mounts may be listed too: a mount of this ROOT's
		// repositories (their path its source) is ours.
		if f[4] == "/dev/fuse" || (len(g) > 1 && strings.HasPrefix(g[1], root) && filepath.Dir(f[4]) != mnt) {
			t.Errorf("a mount outside MNT: %s", line)
		}
		if g[0] == "fuse.mindmount" && filepath.Dir(f[4]) == mnt {
			mounts++
		}
	}
	if mounts != 2 {
		t.Errorf("%d mindmount mounts, want alice's and bob's", mounts)
	}
	stopMindmount(t, cmd, logs)
}

// hostHasCgroups reports whether root may make cgroups here (v2, or v1's
// pids hierarchy).
func hostHasCgroups() bool {
	for _, p := range []string{"/sys/fs/cgroup/cgroup.subtree_control", "/sys/fs/cgroup/pids/cgroup.procs"} {
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Close()
			return true
		}
	}
	return false
}
