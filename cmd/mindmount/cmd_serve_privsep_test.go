package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/host"
)

const (
	rootCanary = "CANARY-root-only-51d2"
	bobCanary  = "CANARY-bobs-memory-88e0"
)

// canaries makes a root-only file (0600 in a 0700 folder) and gives bob a
// memory: the two things no other user may ever read into a repository.
func canaries(t *testing.T, root, mnt string) (secretDir string) {
	t.Helper()
	secretDir = filepath.Join(t.TempDir(), "root-only")
	os.Mkdir(secretDir, 0o700)
	os.WriteFile(filepath.Join(secretDir, "shadow"), []byte(rootCanary+"\n"), 0o600)
	if mnt != "" {
		writeAs(t, bobUID, filepath.Join(mnt, "bob/user_memory/bobs-secret.md"), strings.Replace(teaMemory, "You like tea.", bobCanary, 1))
	}
	return secretDir
}

// noCanaries fails when any object of the user's repository, the worker's
// status file or the daemon's log holds a canary.
func noCanaries(t *testing.T, root, id string, logs *logBuffer) {
	t.Helper()
	dir := host.UserDir(root, id)
	cmd := exec.Command("sh", "-c", `git -c safe.directory='*' cat-file --batch-all-objects --batch-check='%(objectname)' | git -c safe.directory='*' cat-file --batch`)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file: %v", err)
	}
	for _, c := range []string{rootCanary, bobCanary} {
		if strings.Contains(string(out), c) {
			t.Errorf("%s reached %s's git objects", c, id)
		}
		if logs != nil && strings.Contains(logs.String(), c) {
			t.Errorf("%s reached the daemon's log", c)
		}
	}
}

// TestServeCanariesThroughTheMount is issue 22's attack, through the mount
// only, as the sandboxed agent would do it: a folder swapped for a link to
// a root-only folder, links to bob's repository at a folder, at a memory
// and at user_memory/, a hard link, and ten seconds of swaps while another
// process writes. Alice's worker runs as alice: the kernel refuses every
// read of the root-only file and of bob's memory, whatever the worker's
// code does, and no git object of alice's holds either.
func TestServeCanariesThroughTheMount(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	s := startServe(t, root, serveOpts{debounce: 20 * time.Millisecond})
	secret := canaries(t, root, s.mnt)
	s.waitCommit(t, "bob", "user_memory/bobs-secret.md", bobCanary)
	bobRepo := host.UserDir(root, "bob")
	alice := filepath.Join(s.mnt, "alice")
	out, err := as(aliceUID, "sh", "-c", `cd `+alice+` && mkdir s && echo x > s/f && mv s s2 && ln -s `+secret+` s &&
ln -s `+bobRepo+` b && ln -s `+secret+`/shadow user_memory/shadow.md && ln -s `+bobRepo+`/user_memory user_memory/bobs &&
mkdir -p transcripts && ln -s `+secret+` transcripts/http && ln -s `+bobRepo+`/transcripts transcripts/bob
ln `+secret+`/shadow hard 2>&1; cat s/shadow 2>&1; cat b/user_memory/bobs-secret.md 2>&1; true`)
	if err != nil {
		t.Fatalf("alice's shell: %v\n%s", err, out)
	}
	if strings.Contains(out, rootCanary) || strings.Contains(out, bobCanary) {
		t.Fatalf("alice read a canary through her mount:\n%s", out)
	}
	// Ten seconds (MINDMOUNT_RACE_SECONDS) of a folder swapped for a link
	// to the root-only folder while another process writes into it.
	d := raceSeconds()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	swap := exec.CommandContext(ctx, "setpriv", "--reuid", itoa(aliceUID), "--regid", itoa(aliceUID), "--clear-groups", "--", "sh", "-c",
		`cd `+alice+` && while :; do rm -f r 2>/dev/null; mkdir -p r; echo y > r/shadow; mv r r.$$ 2>/dev/null; ln -sfn `+secret+` r; rm -rf r.$$; done`)
	write := exec.CommandContext(ctx, "setpriv", "--reuid", itoa(aliceUID), "--regid", itoa(aliceUID), "--clear-groups", "--", "sh", "-c",
		`cd `+alice+` && i=0; while :; do i=$((i+1)); echo "line $i" >> r/shadow 2>/dev/null; echo n > note-$((i%5)).txt; done`)
	swap.Start()
	write.Start()
	swap.Wait()
	write.Wait()
	// A last write, committed after everything before it.
	writeAs(t, aliceUID, filepath.Join(alice, "user_memory/last.md"), strings.Replace(teaMemory, "Likes tea", "Last", 2))
	s.waitCommit(t, "alice", "user_memory/last.md", "Last")
	noCanaries(t, root, "alice", s.logs)
	if b, _ := os.ReadFile(filepath.Join(secret, "shadow")); string(b) != rootCanary+"\n" {
		t.Fatalf("the root-only file changed: %q", b)
	}
	if ents, _ := os.ReadDir(secret); len(ents) != 1 {
		t.Fatalf("files appeared in the root-only folder: %v", ents)
	}
	st, err := os.ReadFile(filepath.Join(alice, ".mindmount/status"))
	if err != nil || strings.Contains(string(st), rootCanary) || strings.Contains(string(st), bobCanary) {
		t.Fatalf("alice's status: %v\n%s", err, st)
	}
}

func raceSeconds() time.Duration {
	if v, err := strconv.Atoi(os.Getenv("MINDMOUNT_RACE_SECONDS")); err == nil {
		return time.Duration(v) * time.Second
	}
	return 10 * time.Second
}

// TestServeHTTPTranscriptLinkRefused is issue 22's second defect end to
// end: a link planted at transcripts/http (as the agent did through its
// mount) and one /v1/chat with alice's token. Nothing is written outside
// alice's repository: the worker refuses the link, and runs as alice
// anyway.
func TestServeHTTPTranscriptLinkRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the workers run as the users")
	}
	root := serveRoot(t)
	secret := canaries(t, root, "")
	aliceRepo := host.UserDir(root, "alice")
	os.MkdirAll(filepath.Join(aliceRepo, "transcripts"), 0o755)
	if err := os.Symlink(secret, filepath.Join(aliceRepo, "transcripts/http")); err != nil {
		t.Fatal(err)
	}
	tok := strings.TrimSpace(runCmd(t, "users", "token", root, "alice"))
	_, logs, base := startServeHTTP(t, root, append(noModel, "MINDMOUNT_API_KEY="))
	req, _ := http.NewRequest("POST", base+"/v1/chat", strings.NewReader(`{"userId":"alice","message":"hello","sessionId":"s"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(fmt.Sprint(body["error"]), "symbolic link") {
		t.Fatalf("chat through a planted link: %d %v\n%s", resp.StatusCode, body, logs)
	}
	if ents, _ := os.ReadDir(secret); len(ents) != 1 {
		t.Fatalf("files appeared in the root-only folder: %v", ents)
	}
	if strings.Contains(logs.String(), tok) {
		t.Fatal("the token reached the log")
	}
}

// TestServeUIDChange is issue 22's third defect: a uid changed in
// users.json takes effect at SIGHUP — within two seconds the old uid is
// refused and the new one reads and writes, and the repository's files
// are the new uid's.
func TestServeUIDChange(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	s := startServe(t, root, serveOpts{})
	alice := filepath.Join(s.mnt, "alice")
	if out, err := as(aliceUID, "cat", alice+"/user.md"); err != nil {
		t.Fatalf("alice before: %v\n%s", err, out)
	}
	reg := filepath.Join(root, host.RegistryFile)
	b, _ := os.ReadFile(reg)
	b = []byte(strings.Replace(string(b), `"uid": `+itoa(aliceUID)+`,`, `"uid": `+itoa(carolUID)+`,`, 1))
	if err := os.WriteFile(reg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.cmd.Process.Signal(syscall.SIGHUP)
	for {
		_, oldErr := as(aliceUID, "cat", alice+"/user.md")
		out, newErr := as(carolUID, "sh", "-c", "cat "+alice+"/user.md >/dev/null && printf '%s' \"$0\" > "+alice+"/user_memory/after.md", strings.Replace(teaMemory, "You like tea.", "used, 02.12.26 uid change", 1))
		if oldErr != nil && newErr == nil {
			break
		}
		// Only a hang stops the wait: how quickly SIGHUP takes effect
		// is no test's to judge.
		if time.Since(start) > time.Minute {
			t.Fatalf("a minute after SIGHUP: old uid error %v, new uid error %v %s\n%s", oldErr, newErr, out, s.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pid := workerOf(t, "alice", root); !strings.Contains(readProc(pid, "status"), "Uid:\t"+itoa(carolUID)) {
		t.Fatalf("alice's new worker does not run as %d", carolUID)
	}
	s.waitCommit(t, "alice", "user_memory/after.md", "uid change")
	if out, _ := exec.Command("find", host.UserDir(root, "alice"), "!", "-user", itoa(carolUID)).Output(); len(out) != 0 {
		t.Fatalf("files not the new uid's:\n%s", out)
	}
}

func readProc(pid int, name string) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
	return string(b)
}

// TestServeRepositoryStaysTheUsers is issue 22's fourth defect: every file
// serve makes in a user's repository is the user's (root's leftovers of an
// earlier version are given back), a served repository with 600 loose
// objects is packed in the background, and after serve stops the user
// runs plain git, mindmount status and mindmount watch on it. The worker's
// memory is bounded.
func TestServeRepositoryStaysTheUsers(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	repo := host.UserDir(root, "alice")
	// What an earlier serve left: root-owned loose objects, 600 of them.
	gen := exec.Command("sh", "-c", `for i in $(seq 600); do echo "blob $i" | git -c safe.directory='*' hash-object -w --stdin >/dev/null; done; chown -R 0:0 .git/objects`)
	gen.Dir = repo
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s := startServe(t, root, serveOpts{})
	pid := workerOf(t, "alice", root)
	if lim := readProc(pid, "limits"); !raceEnabled && !strings.Contains(lim, "Max data size             536870912") {
		t.Fatalf("alice's worker has no memory bound:\n%s", lim)
	}
	writeAs(t, aliceUID, filepath.Join(s.mnt, "alice/user_memory/likes-tea.md"), teaMemory)
	s.waitCommit(t, "alice", "user_memory/likes-tea.md", "Likes tea")
	// The pack runs in the background at a lower priority: under a loaded
	// CI machine it may take longer than waitFor's 30 seconds.
	packed := func() bool {
		out, _ := exec.Command("git", "-c", "safe.directory=*", "-C", repo, "count-objects", "-v").Output()
		for _, l := range strings.Split(string(out), "\n") {
			if n, ok := strings.CutPrefix(l, "count: "); ok {
				c, _ := strconv.Atoi(n)
				return c < 100
			}
		}
		return false
	}
	for deadline := time.Now().Add(2 * time.Minute); !packed(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the served repository was not packed after 2 minutes\n%s", s.logs)
		}
	}
	stopMindmount(t, s.cmd, s.logs)
	if out, _ := exec.Command("find", repo, "!", "-user", itoa(aliceUID)).Output(); len(out) != 0 {
		t.Fatalf("files in alice's repository that are not alice's:\n%s", out)
	}
	bin := userBinary(t)
	for _, argv := range [][]string{
		{"git", "-C", repo, "log", "--oneline", "-1"},
		{"git", "-C", repo, "fsck"},
		{bin, "status", repo},
	} {
		if out, err := as(aliceUID, append([]string{"env", "HOME=/nonexistent"}, argv...)...); err != nil {
			t.Errorf("as alice after serve: %v: %v\n%s", argv, err, out)
		}
	}
	watch := exec.Command("setpriv", "--reuid", itoa(aliceUID), "--regid", itoa(aliceUID), "--clear-groups", "--", "env", "HOME=/nonexistent", bin, "watch", repo)
	out, _ := watch.StdoutPipe()
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 200)
	n, _ := out.Read(line)
	watch.Process.Signal(syscall.SIGTERM)
	if err := watch.Wait(); err != nil || !strings.Contains(string(line[:n]), "watching") {
		t.Fatalf("mindmount watch as alice after serve: %v %q", err, line[:n])
	}
}

// userBinary is the built binary copied where the test users can run it.
func userBinary(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	reachable(dir)
	b, err := os.ReadFile(mindmountBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "mindmount")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestServeSpareWorker: serve keeps one worker started ahead of need (a
// spare, past exec and initialisation), so a user's first read does not
// wait for them. The spare runs as root but holds nothing of any user —
// no descriptor under ROOT, no mount — until it is given a user; then it
// is that user for good (uid, gid, no groups, no capability), and the
// next spare takes its place.
func TestServeSpareWorker(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	s := startServe(t, root, serveOpts{})
	spare := spareOf(t, s.cmd.Process.Pid)
	// Right after its exec the kernel may still list the daemon's
	// close-on-exec descriptors for a moment: judge the settled spare.
	var held []string
	for try := 0; try < 50; try++ {
		held = held[:0]
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", spare))
		for _, fd := range fds {
			l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", spare, fd.Name()))
			if strings.HasPrefix(l, root) || l == "/dev/fuse" || strings.HasPrefix(l, s.mnt) {
				held = append(held, l)
			}
		}
		if len(held) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(held) != 0 {
		t.Fatalf("the spare %d holds %v before it has a user\n%s", spare, held, s.logs)
	}
	// carol, added while serve runs, gets the spare.
	runCmd(t, "users", "add", root, "carol", "--uid", itoa(carolUID))
	s.cmd.Process.Signal(syscall.SIGHUP)
	// The re-read is the daemon's own business: wait until carol's mount
	// is there (under -race that takes longer than one cat).
	waitFor(t, func() bool {
		_, err := as(carolUID, "cat", filepath.Join(s.mnt, "carol/user_memory.md"))
		return err == nil
	}, "carol's first read")
	if w := workerOf(t, "carol", root); w != spare {
		t.Fatalf("carol's worker is %d, not the spare %d", w, spare)
	}
	for _, id := range []string{"alice", "bob", "carol"} {
		uid := map[string]int{"alice": aliceUID, "bob": bobUID, "carol": carolUID}[id]
		st := readProc(workerOf(t, id, root), "status")
		for _, want := range []string{
			fmt.Sprintf("Uid:\t%d\t%d\t%d\t%d\n", uid, uid, uid, uid),
			fmt.Sprintf("Gid:\t%d\t%d\t%d\t%d\n", uid, uid, uid, uid),
			"CapPrm:\t0000000000000000\n", "CapEff:\t0000000000000000\n",
		} {
			if !strings.Contains(st, want) {
				t.Errorf("%s's worker: no %q in\n%s", id, want, st)
			}
		}
		if _, groups, _ := strings.Cut(st, "\nGroups:"); strings.TrimSpace(strings.SplitN(groups, "\n", 2)[0]) != "" {
			t.Errorf("%s's worker has supplementary groups:\n%s", id, st)
		}
	}
	if next := spareOf(t, s.cmd.Process.Pid); next == spare {
		t.Fatal("no new spare after the last was given a user")
	}
	// The daemon says what a start cost: the wall time and the worker's
	// own CPU time, which load does not inflate.
	if !strings.Contains(s.logs.String(), "user=carol") || !regexp.MustCompile(`user=carol uid=\d+ pid=\d+ ready_ms=\d+ cpu_ms=[0-9.]+`).MatchString(s.logs.String()) {
		t.Fatalf("no start figures for carol in the log:\n%s", s.logs)
	}
}

// spareOf waits for serve's (pid's) spare worker: a worker that still
// runs as root.
func spareOf(t *testing.T, serve int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, pid := range workerPids() {
			st := readProc(pid, "status")
			if strings.Contains(st, fmt.Sprintf("PPid:\t%d\n", serve)) && strings.Contains(st, "Uid:\t0\t0\t0\t0\n") {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("serve has no spare worker")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
