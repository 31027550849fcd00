package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/serve/cluster/clustertest"
)

// preReceive refuses any update that is not a fast-forward (and logs
// every update it sees): the git host of a cluster never moves backwards.
// A file "hold" in the repository makes it refuse every push (a git
// host that is down, for the replication lag).
const preReceive = `#!/bin/sh
if [ -e "$GIT_DIR/hold" ]; then echo "the git host holds every push" >&2; exit 1; fi
while read old new ref; do
  echo "$old $new $ref" >> "$GIT_DIR/updates.log"
  if [ "$old" != 0000000000000000000000000000000000000000 ] && ! git merge-base --is-ancestor "$old" "$new"; then
    echo "REFUSED non-fast-forward $ref $old $new" >> "$GIT_DIR/updates.log"
    echo "non-fast-forward updates are refused" >&2
    exit 1
  fi
done
`

// gitHost serves the bare repositories under dir with git daemon on a
// loopback port (pushes allowed, hooks run) and returns its git:// base.
func gitHost(t *testing.T, dir string, users ...string) string {
	t.Helper()
	for _, u := range users {
		bare := filepath.Join(dir, u+".git")
		if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		if err := os.WriteFile(filepath.Join(bare, "hooks", "pre-receive"), []byte(preReceive), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	addr := freeLoopback(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack",
		"--listen=127.0.0.1", "--port="+port, "--base-path="+dir, dir)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*")
	// "git daemon" runs git-daemon as a child, which forks one per
	// connection: a group of its own, killed whole, leaves none behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("git daemon on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "git://" + addr
}

// clusterBase starts etcd and a git host holding alice's bare
// repository, which every node's worker (as alice's uid) may write; it
// returns etcd's URL, the test's folder (reachable by every uid), the
// host's git:// base and alice's bare repository.
func clusterBase(t *testing.T) (etcd, tmp, host, bare string) {
	t.Helper()
	etcd = clustertest.StartEtcd(t)
	tmp = t.TempDir()
	reachable(tmp)
	remotes := filepath.Join(tmp, "remotes")
	host = gitHost(t, remotes, "alice")
	bare = filepath.Join(remotes, "alice.git")
	os.Chmod(remotes, 0o777)
	filepath.Walk(bare, func(p string, _ os.FileInfo, _ error) error { return os.Chmod(p, 0o777) })
	return etcd, tmp, host, bare
}

func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// noteModel answers every model call: a chat line, one fact per
// "note-N" in the transcript, each added.
func noteModel(t *testing.T) *llmtest.Server {
	m := llmtest.New(t)
	note := regexp.MustCompile(`note-[0-9]+`)
	m.Handle(func(c llmtest.Call) llmtest.Reply {
		switch c.Kind {
		case llmtest.KindExtract:
			n := note.FindString(c.Prompt)
			return llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []any{map[string]any{
				"kind": "user", "slug": n, "description": "The " + n, "fact": "You wrote " + n + ".", "episode": ""}}})}
		case llmtest.KindDecide:
			return llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`}
		}
		return llmtest.Reply{Content: "Noted."}
	})
	return m
}

// clusterNode is one running serve of the test's cluster.
type clusterNode struct {
	cmd  *exec.Cmd
	logs *logBuffer
	base string
}

func startClusterNode(t *testing.T, name, root, etcd string, env []string, extra ...string) clusterNode {
	t.Helper()
	addr := freeLoopback(t)
	cmd, logs, line := startFirstLine(t, env, append([]string{"serve", "--root", root, "--http", addr,
		"--cluster", etcd, "--node", name, "--advertise", addr, "--cluster-ttl", "2s"}, extra...)...)
	// serve's workers die with it (Pdeathsig), but a node paused by a
	// failed test may leave a stopped family: kill it whole.
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			signalAll(family(cmd.Process.Pid), syscall.SIGKILL)
		}
	})
	if !strings.HasPrefix(line, "mindmount: serving") {
		t.Fatalf("node %s: %q\n%s", name, line, logs)
	}
	return clusterNode{cmd, logs, "http://" + addr}
}

// writeNote chats "note-N" as alice through node and says bye, waiting
// for the memory to be written; the status is returned.
func writeNote(t *testing.T, n clusterNode, user string, i int) int {
	t.Helper()
	do := func(path, body string) int {
		req, _ := http.NewRequest("POST", n.base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer cluster-test-key")
		req.Header.Set("X-Mindmount-User", user)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Logf("%s %s: %d %s", n.base, path, resp.StatusCode, b)
		}
		return resp.StatusCode
	}
	sess := fmt.Sprintf("s%d", i)
	if code := do("/v1/chat", fmt.Sprintf(`{"userId":%q,"message":"Remember note-%d please","sessionId":%q}`, user, i, sess)); code != 200 {
		return code
	}
	return do("/v1/bye?wait=1", fmt.Sprintf(`{"userId":%q,"sessionId":%q}`, user, sess))
}

// remoteHas waits (a minute at most) until the bare repository's branch
// holds every note.
func remoteHas(t *testing.T, bare string, notes ...int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var out []byte
	for time.Now().Before(deadline) {
		ref, _ := exec.Command("git", "--git-dir", bare, "for-each-ref", "--count=1", "--format=%(refname)", "refs/heads").Output()
		out, _ = exec.Command("git", "--git-dir", bare, "ls-tree", "-r", "--name-only", strings.TrimSpace(string(ref))).Output()
		all := true
		for _, n := range notes {
			all = all && strings.Contains(string(out), fmt.Sprintf("note-%d.md", n))
		}
		if all {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the remote %s lacks some of notes %v:\n%s", bare, notes, out)
}

// TestClusterServesEachUserOnOneNode: two serve nodes (the built binary,
// separate ROOTs), one etcd, a git host refusing non-fast-forwards.
// Writes through either node reach the remote; a node SIGKILLed loses
// its user to the other after the lease, which fetches first: nothing
// written before is lost.
func TestClusterServesEachUserOnOneNode(t *testing.T) {
	etcd, tmp, host, bare := clusterBase(t)
	model := noteModel(t)
	env := append(fakeModelEnv(model), "MINDMOUNT_API_KEY=cluster-test-key")
	var nodes []clusterNode
	for _, name := range []string{"a", "b"} {
		root := filepath.Join(tmp, name)
		os.MkdirAll(root, 0o755)
		runCmd(t, append([]string{"users", "add", root, "alice"}, ownUID(aliceUID)...)...)
		runCmd(t, "remote", "set", filepath.Join(root, "users", "alice"), host+"/alice.git")
		nodes = append(nodes, startClusterNode(t, name, root, etcd, env))
	}
	a, b := nodes[0], nodes[1]
	if code := writeNote(t, a, "alice", 1); code != 200 {
		t.Fatalf("write through a: %d\n%s", code, a.logs)
	}
	// b does not hold alice: the write goes once to a.
	if code := writeNote(t, b, "alice", 2); code != 200 {
		t.Fatalf("write through b: %d\nb:\n%s\na:\n%s", code, b.logs, a.logs)
	}
	remoteHas(t, bare, 1, 2)
	if strings.Contains(b.logs.String(), "user's worker started") {
		t.Fatalf("b started a worker for alice while a held her: two writers\n%s", b.logs)
	}

	a.cmd.Process.Signal(syscall.SIGKILL)
	a.cmd.Wait()
	deadline := time.Now().Add(60 * time.Second)
	for code := writeNote(t, b, "alice", 3); code != 200; code = writeNote(t, b, "alice", 3) {
		if time.Now().After(deadline) {
			t.Fatalf("b never took alice after a died: %d\n%s", code, b.logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	remoteHas(t, bare, 1, 2, 3)
	if out, err := exec.Command("git", "--git-dir", bare, "fsck", "--no-progress").CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
	stopMindmount(t, b.cmd, b.logs)
	log, _ := os.ReadFile(filepath.Join(bare, "updates.log"))
	t.Logf("updates seen by the git host:\n%s", log)
}
