package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/control"
	"github.com/mindmount/mindmount/serve/host"
)

// peerDial names the socket the re-executed test connects to, as the uid
// it was started with.
const peerDial = "MINDMOUNT_PEER_DIAL"

// TestPeerHelper is not a test of its own: TestServeHostilePeers runs it
// as another uid. It connects, sends a request (HTTP to an abstract
// socket, a control request to a path) and prints what came back.
func TestPeerHelper(t *testing.T) {
	addr := os.Getenv(peerDial)
	if addr == "" {
		t.Skip("run by TestServeHostilePeers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var c net.Conn
	var err error
	if strings.HasPrefix(addr, "@") {
		c, err = net.DialTimeout("unix", addr, 5*time.Second)
	} else {
		c, err = control.Dial(ctx, addr) // a path of any length, as mindmount reaches it
	}
	if err != nil {
		fmt.Println("PEER: connect refused")
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if strings.HasPrefix(addr, "@") {
		io.WriteString(c, "GET /health HTTP/1.0\r\nHost: worker\r\n\r\n")
	} else {
		io.WriteString(c, `{"verb":"status"}`+"\n")
	}
	b, _ := io.ReadAll(io.LimitReader(c, 200))
	if len(b) == 0 {
		fmt.Println("PEER: closed unanswered")
		return
	}
	fmt.Printf("PEER: answered %q\n", b)
}

// listening lists the unix sockets process pid listens on (abstract ones
// with their "@").
func listening(pid int) []string {
	mine := map[string]bool{}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil {
			if n, ok := strings.CutPrefix(l, "socket:["); ok {
				mine[strings.TrimSuffix(n, "]")] = true
			}
		}
	}
	b, _ := os.ReadFile("/proc/net/unix")
	var out []string
	for _, line := range strings.Split(string(b), "\n")[1:] {
		// Num RefCount Protocol Flags Type St Inode Path
		f := strings.Fields(line)
		if len(f) == 8 && f[3] == "00010000" && mine[f[6]] {
			out = append(out, f[7])
		}
	}
	return out
}

// TestServeHostilePeers: every socket the daemon or a worker listens on
// answers only whom it serves. Abstract sockets have no file mode, so the
// peer's uid is the whole rule: each is tried as the users' uids, as
// nobody, and as root, from a process with only that uid.
func TestServeHostilePeers(t *testing.T) {
	requireRootFUSE(t)
	root := serveRoot(t)
	// The model relay exists only with a model: one that never answers.
	s := startServe(t, root, serveOpts{})
	alicePid := workerOf(t, "alice", root)
	bin := userBinary(t)
	const nobody = 65534
	try := func(uid int, addr string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin+".test", "-test.run=^TestPeerHelper$")
		cmd.Env = []string{peerDial + "=" + addr, "HOME=/nonexistent", "TMPDIR=/tmp"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
		out, err := cmd.CombinedOutput()
		_, line, ok := strings.Cut(string(out), "PEER: ")
		if err != nil || !ok {
			t.Fatalf("as uid %d on %s: %v\n%s", uid, addr, err, out)
		}
		return strings.SplitN(line, "\n", 2)[0]
	}
	// The test binary itself is the helper, where every uid can run it.
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin+".test", self, 0o755); err != nil {
		t.Fatal(err)
	}

	var workerHTTP, ctl []string
	for _, a := range listening(alicePid) {
		if strings.HasPrefix(a, "@mindmount-") {
			workerHTTP = append(workerHTTP, a)
		}
	}
	for _, a := range listening(s.cmd.Process.Pid) {
		if strings.HasPrefix(a, "@mindmount-ctl-") {
			ctl = append(ctl, a)
		}
	}
	controlSock := filepath.Join(host.UserDir(root, "alice"), ".git", control.SocketFile)
	if len(workerHTTP) != 1 || len(ctl) != 2 {
		t.Fatalf("alice's worker listens on %v, the daemon's model relays are %v; want one and two", workerHTTP, ctl)
	}
	answered := func(r string) bool { return strings.HasPrefix(r, "answered") && !strings.Contains(r, "refused") }
	for _, c := range []struct {
		what string
		addr string
		uid  int
		want bool
	}{
		// Alice's worker's HTTP: serve (root) forwards; nobody else, not
		// even alice's own processes, which go through serve's checks.
		{"alice's worker HTTP", workerHTTP[0], 0, true},
		{"alice's worker HTTP", workerHTTP[0], aliceUID, false},
		{"alice's worker HTTP", workerHTTP[0], bobUID, false},
		{"alice's worker HTTP", workerHTTP[0], nobody, false},
		// Alice's control socket: alice and root (the operator).
		{"alice's control socket", controlSock, aliceUID, true},
		{"alice's control socket", controlSock, bobUID, false},
		{"alice's control socket", controlSock, nobody, false},
	} {
		if got := try(c.uid, c.addr); answered(got) != c.want {
			t.Errorf("%s as uid %d: %s (want answered: %v)", c.what, c.uid, got, c.want)
		}
	}
	// Each model relay answers its one user (and root), never the other
	// user or nobody.
	for _, a := range ctl {
		byAlice, byBob := answered(try(aliceUID, a)), answered(try(bobUID, a))
		if byAlice == byBob {
			t.Errorf("model relay %s: alice answered %v, bob answered %v; want exactly one", a, byAlice, byBob)
		}
		if got := try(nobody, a); answered(got) {
			t.Errorf("model relay %s answered nobody: %s", a, got)
		}
		if got := try(0, a); !answered(got) {
			t.Errorf("model relay %s did not answer root: %s", a, got)
		}
	}
}
