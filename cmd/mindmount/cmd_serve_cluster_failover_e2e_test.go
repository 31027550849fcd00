package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/cluster"
)

// remoteLacks is which of notes the bare repository's branch does not
// hold now (no waiting: an acknowledged write must be there already).
func remoteLacks(bare string, notes []int) []int {
	ref, _ := exec.Command("git", "--git-dir", bare, "for-each-ref", "--count=1", "--format=%(refname)", "refs/heads").Output()
	out, _ := exec.Command("git", "--git-dir", bare, "ls-tree", "-r", "--name-only", strings.TrimSpace(string(ref))).Output()
	var lack []int
	for _, n := range notes {
		if !strings.Contains(string(out), fmt.Sprintf("note-%d.md", n)) {
			lack = append(lack, n)
		}
	}
	return lack
}

// clusterHealth is /health's cluster field of node n.
func clusterHealth(t *testing.T, n clusterNode) cluster.Health {
	t.Helper()
	resp, err := http.Get(n.base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	// /health needs no credentials: it counts users, never names them.
	if strings.Contains(string(raw), "alice") {
		t.Fatalf("/health names a user: %s", raw)
	}
	var body struct {
		Cluster cluster.Health `json:"cluster"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	return body.Cluster
}

// family is pid and every process below it (serve and its workers): a
// host that pauses pauses them all.
func family(pid int) []int {
	children := map[int][]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		p, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces; read after ')'.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 {
			pp, _ := strconv.Atoi(f[1])
			children[pp] = append(children[pp], p)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

func signalAll(pids []int, sig syscall.Signal) {
	for _, p := range pids {
		syscall.Kill(p, sig)
	}
}

// ackLog is the notes whose writes were acknowledged (200).
type ackLog struct {
	mu    gosync.Mutex
	notes []int
	next  int
}

// write writes the next note through n until acknowledged (retrying
// while the user changes hands), a minute at most.
func (l *ackLog) write(t *testing.T, n clusterNode, user string) {
	t.Helper()
	l.mu.Lock()
	l.next++
	i := l.next
	l.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for writeNote(t, n, user, i) != 200 {
		if time.Now().After(deadline) {
			t.Errorf("note %d through %s never acknowledged\n%s", i, n.base, n.logs)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	l.mu.Lock()
	l.notes = append(l.notes, i)
	l.mu.Unlock()
}

func (l *ackLog) acked() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.notes...)
}

// TestClusterSyncReplicationMoveAndPause: two nodes with
// --sync-replication, a git host refusing non-fast-forwards. Every
// acknowledged write is in the remote at once; cluster move hands alice
// over while writes go on, none lost; a node paused (SIGSTOP, workers
// too) past its lease and resumed writes nothing the new owner did not
// merge, in several trials; a node SIGKILLed loses nothing acknowledged.
func TestClusterSyncReplicationMoveAndPause(t *testing.T) {
	etcd, tmp, host, bare := clusterBase(t)
	env := append(fakeModelEnv(noteModel(t)), "MINDMOUNT_API_KEY=cluster-test-key")
	nodes := map[string]clusterNode{}
	for _, name := range []string{"a", "b"} {
		root := filepath.Join(tmp, name)
		os.MkdirAll(root, 0o755)
		runCmd(t, append([]string{"users", "add", root, "alice"}, ownUID(aliceUID)...)...)
		runCmd(t, "remote", "set", filepath.Join(root, "users", "alice"), host+"/alice.git")
		nodes[name] = startClusterNode(t, name, root, etcd, env, "--sync-replication")
	}
	a, b := nodes["a"], nodes["b"]
	var log ackLog
	// Acknowledged means pushed: each note is in the remote when its
	// answer comes, through the owner or through the other node's hop.
	for _, n := range []clusterNode{a, a, b} {
		log.write(t, n, "alice")
		if lack := remoteLacks(bare, log.acked()); len(lack) > 0 {
			t.Fatalf("acknowledged notes %v are not in the remote (--sync-replication)", lack)
		}
	}
	if h := clusterHealth(t, a); h.Node != "a" || h.UsersHeld != 1 || !h.Writing || h.LeaseAgeSeconds < 0 {
		t.Fatalf("a's /health cluster field: %+v", h)
	}
	moveWhileWriting(t, etcd, bare, a, b, &log)
	for trial := range 5 {
		pauseTrial(t, nodes, bare, &log, trial)
	}
	checkRemote(t, bare)

	owner := ownerOf(t, nodes)
	log.write(t, owner, "alice")
	signalAll(family(owner.cmd.Process.Pid), syscall.SIGKILL)
	owner.cmd.Wait()
	if lack := remoteLacks(bare, log.acked()); len(lack) > 0 {
		t.Fatalf("acknowledged notes %v lost with the node SIGKILLed", lack)
	}
}

// moveWhileWriting moves alice from a to b with mindmount cluster move
// while writes go on through both nodes: every acknowledged one ends in
// the remote, and b holds alice afterwards.
func moveWhileWriting(t *testing.T, etcd, bare string, a, b clusterNode, log *ackLog) {
	t.Helper()
	stop := make(chan struct{})
	var wg gosync.WaitGroup
	for _, n := range []clusterNode{a, b} {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				log.write(t, n, "alice")
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	out := runCmd(t, "cluster", "move", "alice", "b", "--cluster", etcd)
	close(stop)
	wg.Wait()
	if !strings.Contains(out, "alice is served by b") {
		t.Fatalf("cluster move: %q", out)
	}
	if ha, hb := clusterHealth(t, a), clusterHealth(t, b); ha.UsersHeld != 0 || hb.UsersHeld != 1 {
		t.Fatalf("after the move a holds %d, b %d users\na:\n%s\nb:\n%s", ha.UsersHeld, hb.UsersHeld, a.logs, b.logs)
	}
	log.write(t, a, "alice") // through a, forwarded to b
	if lack := remoteLacks(bare, log.acked()); len(lack) > 0 {
		t.Fatalf("acknowledged notes %v are not in the remote after the move", lack)
	}
}

// checkRemote: the git host saw no non-fast-forward attempt and its
// repository is whole.
func checkRemote(t *testing.T, bare string) {
	t.Helper()
	updates, _ := os.ReadFile(filepath.Join(bare, "updates.log"))
	if strings.Contains(string(updates), "REFUSED") {
		t.Fatalf("a non-fast-forward push was attempted:\n%s", updates)
	}
	if out, err := exec.Command("git", "--git-dir", bare, "fsck", "--no-progress").CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// ownerOf is the node whose /health says it holds a user.
func ownerOf(t *testing.T, nodes map[string]clusterNode) clusterNode {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range nodes {
			if clusterHealth(t, n).UsersHeld == 1 {
				return n
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no node holds alice")
	return clusterNode{}
}

// pauseTrial stops alice's owner (serve and its workers) past its lease,
// writes through the other node (which takes alice), resumes the owner
// and writes again: the resumed node must let alice go and the remote
// must hold every acknowledged note.
func pauseTrial(t *testing.T, nodes map[string]clusterNode, bare string, log *ackLog, trial int) {
	t.Helper()
	owner := ownerOf(t, nodes)
	var other clusterNode
	for _, n := range nodes {
		if n.base != owner.base {
			other = n
		}
	}
	pids := family(owner.cmd.Process.Pid)
	signalAll(pids, syscall.SIGSTOP)
	resumed := false
	defer func() {
		if !resumed {
			signalAll(pids, syscall.SIGCONT)
		}
	}()
	time.Sleep(3 * time.Second) // past the 2 s lease
	log.write(t, other, "alice")
	signalAll(pids, syscall.SIGCONT)
	resumed = true
	log.write(t, owner, "alice") // forwarded to the new owner
	deadline := time.Now().Add(60 * time.Second)
	for clusterHealth(t, owner).UsersHeld != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("trial %d: the resumed node still holds alice\n%s", trial, owner.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if lack := remoteLacks(bare, log.acked()); len(lack) > 0 {
		t.Fatalf("trial %d: acknowledged notes %v are not in the remote", trial, lack)
	}
}

// TestClusterMoveFlushesFirst: without --sync-replication a write is
// pushed a few seconds after its commit; cluster move right after two
// writes still finds them in the remote when it returns (the owner
// flushed and pushed before handing over), and the new owner serves
// them.
func TestClusterMoveFlushesFirst(t *testing.T) {
	etcd, tmp, host, bare := clusterBase(t)
	env := append(fakeModelEnv(noteModel(t)), "MINDMOUNT_API_KEY=cluster-test-key")
	var nodes []clusterNode
	for _, name := range []string{"a", "b"} {
		root := filepath.Join(tmp, name)
		os.MkdirAll(root, 0o755)
		runCmd(t, append([]string{"users", "add", root, "alice"}, ownUID(aliceUID)...)...)
		runCmd(t, "remote", "set", filepath.Join(root, "users", "alice"), host+"/alice.git")
		nodes = append(nodes, startClusterNode(t, name, root, etcd, env))
	}
	a, b := nodes[0], nodes[1]
	var log ackLog
	log.write(t, a, "alice")
	log.write(t, a, "alice")
	var out, errb strings.Builder
	if code := run([]string{"cluster", "move", "alice", "b", "--cluster", etcd}, &out, &errb); code != 0 || !strings.Contains(out.String(), "alice is served by b") {
		t.Fatalf("cluster move: %d %s%s\na:\n%s\nb:\n%s", code, &out, &errb, a.logs, b.logs)
	}
	if lack := remoteLacks(bare, log.acked()); len(lack) > 0 {
		t.Fatalf("notes %v acknowledged before the move are not in the remote after it\na:\n%s", lack, a.logs)
	}
	if h := clusterHealth(t, b); h.UsersHeld != 1 {
		t.Fatalf("b does not hold alice after the move: %+v\n%s", h, b.logs)
	}
	log.write(t, b, "alice")
	remoteHas(t, bare, log.acked()...)
	lagWhileHostRefuses(t, etcd, bare, b, &log)
	checkRemote(t, bare)
}

// lagWhileHostRefuses: while the git host refuses every push, the
// owner's /health and cluster status count one user with unpushed
// commits, the oldest a second old or more; once the host takes pushes
// again the lag goes back to none and the remote holds every note.
func lagWhileHostRefuses(t *testing.T, etcd, bare string, owner clusterNode, log *ackLog) {
	t.Helper()
	hold := filepath.Join(bare, "hold")
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	log.write(t, owner, "alice")
	waitLag(t, owner, "a lag while the host refuses", func(l cluster.Lag) bool { return l.UnpushedUsers == 1 && l.WorstLagSeconds >= 1 })
	deadline := time.Now().Add(60 * time.Second)
	for {
		var st cluster.Status
		json.Unmarshal([]byte(runCmd(t, "cluster", "status", "--cluster", etcd, "--json")), &st)
		if len(st.Nodes) > 0 && slices.ContainsFunc(st.Nodes, func(n cluster.NodeStatus) bool { return n.Lag != nil && n.Lag.UnpushedUsers == 1 }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster status never showed the lag: %+v", st)
		}
		time.Sleep(200 * time.Millisecond)
	}
	os.Remove(hold)
	log.write(t, owner, "alice")
	waitLag(t, owner, "no lag once the host takes pushes", func(l cluster.Lag) bool { return l == cluster.Lag{} })
	if lack := remoteLacks(bare, log.acked()); len(lack) > 0 {
		t.Fatalf("notes %v are not in the remote though no lag is reported", lack)
	}
}

// waitLag waits (a minute at most) until n's /health replication field
// satisfies ok.
func waitLag(t *testing.T, n clusterNode, what string, ok func(cluster.Lag) bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		h := clusterHealth(t, n)
		if ok(h.Replication) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: /health says %+v\n%s", what, h.Replication, n.logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
