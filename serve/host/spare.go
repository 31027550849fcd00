package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A spare is a worker process started before any user needs it: exec, the
// Go runtime and every package's initialisation (together 50-90 ms of CPU
// for this binary, most of a cold user's first read) are paid while
// nobody waits. It runs as the daemon (root) and holds nothing but its end
// of a socketpair, on which it waits for its Assignment: a user's worker
// flags and the user's descriptors (the mount's /dev/fuse, the HTTP
// listener). It then drops to the user's uid and gid for good
// (DropPrivileges) before it opens anything of the user's — OpenSSH's
// privilege separation, where the child of the privileged monitor drops
// its rights right after the fork, works the same way. A spare is never
// given a second user: one process, one user, for its whole life.
type spare struct {
	cmd  *exec.Cmd
	sock *os.File      // the daemon's end of the socketpair
	out  io.ReadCloser // the spare's standard output (WorkerReady)
	tail *lastWords    // its standard error, passed on to the daemon's
	done chan struct{} // closed when the process exited
}

// spares keeps one spare ready. Lock order: worker.mu, then spares.mu.
type spares struct {
	mu      sync.Mutex
	next    *spare // nil: none ready
	filling bool   // a spare is being started
	closed  bool
	wg      sync.WaitGroup
}

// takeSpare returns the ready spare, or starts one now when there is none,
// confined to user id's cgroup before it becomes the user's.
func (ws *Workers) takeSpare(id string) (*spare, error) {
	s, err := ws.readySpare()
	if err == nil {
		ws.confine(id, s.cmd.Process.Pid)
	}
	return s, err
}

// readySpare is the ready spare, or one started now when there is none.
func (ws *Workers) readySpare() (*spare, error) {
	sp := &ws.spares
	sp.mu.Lock()
	s, closed := sp.next, sp.closed
	sp.next = nil
	sp.mu.Unlock()
	if closed {
		return nil, errors.New("mindmount serve is shutting down")
	}
	if s != nil && s.alive() {
		return s, nil
	}
	if s != nil {
		s.kill()
	}
	return startSpare(ws.cfg.Exe)
}

// refill starts the next spare in the background unless one is ready or
// on its way.
func (ws *Workers) refill() {
	sp := &ws.spares
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.closed || sp.filling || (sp.next != nil && sp.next.alive()) {
		return
	}
	sp.filling = true
	sp.wg.Add(1)
	go func() {
		defer sp.wg.Done()
		s, err := startSpare(ws.cfg.Exe)
		sp.mu.Lock()
		sp.filling = false
		if err == nil && !sp.closed {
			if old := sp.next; old != nil {
				defer old.kill()
			}
			sp.next, s = s, nil
		}
		sp.mu.Unlock()
		if s != nil {
			s.kill()
		}
		if err != nil {
			ws.log.Warn("cannot start a spare worker; the next user's start will take longer", "err", err)
		}
	}()
}

// close ends the ready spare and waits for one being started.
func (sp *spares) close() {
	sp.mu.Lock()
	sp.closed = true
	s := sp.next
	sp.next = nil
	sp.mu.Unlock()
	sp.wg.Wait()
	if s != nil {
		s.kill()
	}
}

// Assignment is what the daemon tells a spare: the worker flags of the
// user it is to serve (--uid and --gid among them). Fuse says that the
// first passed descriptor is the user's mount; the last is always the
// HTTP listener.
type Assignment struct {
	Args []string `json:"args"`
	Fuse bool     `json:"fuse"`
}

// startSpare starts a spare: "EXE worker --spare-fd 3", as the daemon,
// with the workers' environment.
func startSpare(exe string) (*spare, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("spare worker socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "spare"), os.NewFile(uintptr(fds[1]), "spare")
	defer theirs.Close()
	cmd := exec.Command(exe, "worker", "--spare-fd", "3")
	cmd.Dir = "/"
	cmd.Env = workerEnv()
	cmd.ExtraFiles = []*os.File{theirs}
	tail := &lastWords{}
	cmd.Stderr = tail
	// A git the worker started may hold its standard error open after
	// the worker died: its end is noticed at once all the same.
	cmd.WaitDelay = time.Second
	// SIGKILL when the daemon dies; the worker arms it again once it runs
	// as the user, the kernel having cleared it with the uid change.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		ours.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		ours.Close()
		return nil, fmt.Errorf("start a worker: %w", err)
	}
	s := &spare{cmd: cmd, sock: ours, out: out, tail: tail, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// alive reports whether the spare's process still runs.
func (s *spare) alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// assign sends the spare its user: the flags and the descriptors, which
// the spare then owns (the caller may close its copies).
func (s *spare) assign(a Assignment, files []*os.File) error {
	msg, err := json.Marshal(a)
	if err != nil {
		return err
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	err = unix.Sendmsg(int(s.sock.Fd()), msg, unix.UnixRights(fds...), nil, 0)
	s.sock.Close() // one assignment per spare; its end sees EOF after it
	if err != nil {
		return fmt.Errorf("hand the user to a worker: %w", err)
	}
	return nil
}

// kill ends a spare that will not be used.
func (s *spare) kill() {
	s.sock.Close() // an unassigned spare exits at EOF by itself
	s.cmd.Process.Kill()
	<-s.done
}

// maxAssignment bounds the message a spare reads: worker flags only.
const maxAssignment = 64 << 10

// ErrNoAssignment means a spare's socket closed before the daemon gave it
// a user: the daemon stops or no longer needs it; the spare exits quietly.
var ErrNoAssignment = errors.New("the daemon gave this worker no user")

// AwaitAssignment is the spare's side: it waits on fd (the socketpair's
// end) for its Assignment and returns the worker flags and the passed
// descriptors (the mount's, or -1 without a mount, and the HTTP
// listener's).
func AwaitAssignment(fd int) (args []string, fuseFd, httpFd int, err error) {
	defer unix.Close(fd)
	buf := make([]byte, maxAssignment)
	oob := make([]byte, unix.CmsgSpace(4*4))
	n, oobn, flags, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, -1, -1, fmt.Errorf("wait for a user: %w", err)
	}
	if n == 0 && oobn == 0 {
		return nil, -1, -1, ErrNoAssignment
	}
	var passed []int
	if oobn > 0 {
		msgs, perr := unix.ParseSocketControlMessage(oob[:oobn])
		if perr != nil {
			return nil, -1, -1, perr
		}
		for _, m := range msgs {
			fds, perr := unix.ParseUnixRights(&m)
			if perr == nil {
				passed = append(passed, fds...)
			}
		}
	}
	closeAll := func() {
		for _, f := range passed {
			unix.Close(f)
		}
	}
	if flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
		closeAll()
		return nil, -1, -1, errors.New("the daemon's message to the worker was cut short")
	}
	var a Assignment
	if err := json.Unmarshal(buf[:n], &a); err != nil {
		closeAll()
		return nil, -1, -1, fmt.Errorf("the daemon's message to the worker: %w", err)
	}
	want := 1
	if a.Fuse {
		want = 2
	}
	if len(passed) != want {
		closeAll()
		return nil, -1, -1, fmt.Errorf("the worker got %d descriptors, not %d", len(passed), want)
	}
	fuseFd = -1
	if a.Fuse {
		fuseFd = passed[0]
		// The worker's FUSE server reads it as /dev/fd/N and its HTTP
		// server takes it over: neither goes to a git subprocess (close
		// on exec stays set).
	}
	return a.Args, fuseFd, passed[len(passed)-1], nil
}

// DropPrivileges makes the calling process the user uid:gid for good:
// no supplementary groups, real, effective and saved ids all the user's,
// so neither root nor any capability can come back (the kernel clears
// them as the last id leaves 0). It then arms the parent-death signal
// again (the uid change cleared it) and checks the result. A process that
// is not root may only "drop" to its own ids.
//
// groups are the supplementary groups the worker keeps: the groups of the
// teams its user belongs to (TeamGroups), through which the kernel lets it
// read those teams' repositories (mode 0750) and nothing else.
func DropPrivileges(uid, gid uint32, groups ...uint32) error {
	root := os.Geteuid() == 0
	if root && uid == 0 {
		return fmt.Errorf("become uid 0: %w", ErrRootWorker)
	}
	if root {
		gs := make([]int, len(groups))
		for i, g := range groups {
			gs[i] = int(g)
		}
		// syscall's, not unix's: unix.Setgroups changes the calling
		// thread only, and the worker's other threads would keep root's
		// groups (or lack the teams'); syscall's sets every thread's.
		if err := syscall.Setgroups(gs); err != nil {
			return fmt.Errorf("drop groups: %w", err)
		}
		if err := unix.Setresgid(int(gid), int(gid), int(gid)); err != nil {
			return fmt.Errorf("become gid %d: %w", gid, err)
		}
		if err := unix.Setresuid(int(uid), int(uid), int(uid)); err != nil {
			return fmt.Errorf("become uid %d: %w", uid, err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		return err
	}
	if os.Getppid() == 1 {
		return errors.New("the daemon is gone")
	}
	return checkDropped(uid, gid, root, groups...)
}

// checkDropped verifies, from the kernel's own view (/proc/self/status,
// which covers every thread's process-wide ids and capabilities), that the
// process is uid:gid with no capability (unless uid is 0), and with no
// groups when it was root (a daemon that is not root keeps its own).
func checkDropped(uid, gid uint32, wasRoot bool, groups ...uint32) error {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	return checkStatus(b, uid, gid, wasRoot, groups...)
}

// checkStatus is checkDropped's judgement of a /proc/PID/status.
func checkStatus(b []byte, uid, gid uint32, wasRoot bool, groups ...uint32) error {
	gs := make([]string, len(groups))
	for i, g := range groups {
		gs[i] = fmt.Sprint(g)
	}
	want := map[string]string{
		"Uid:":    fmt.Sprintf("%d %d %d %d", uid, uid, uid, uid),
		"Gid:":    fmt.Sprintf("%d %d %d %d", gid, gid, gid, gid),
		"Groups:": strings.Join(gs, " "),
	}
	if uid != 0 { // a user who is root (serve's own, in tests) stays root
		want["CapEff:"] = "0000000000000000"
		want["CapPrm:"] = "0000000000000000"
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		w, ok := want[f[0]]
		if !ok {
			continue
		}
		if got := strings.Join(f[1:], " "); got != w && (f[0] != "Groups:" || wasRoot) {
			return fmt.Errorf("after dropping to %d:%d, %s is %q, not %q", uid, gid, f[0], got, w)
		}
		delete(want, f[0])
	}
	if len(want) != 0 {
		return fmt.Errorf("cannot check the worker's ids: %v missing from /proc/self/status", want)
	}
	return nil
}

// failed ends a spare that did not become its user's worker (killed,
// waited for) and returns err with the last words it printed.
func (sp *spare) failed(err error) error {
	sp.cmd.Process.Kill()
	<-sp.done
	if last := sp.tail.String(); last != "" {
		err = fmt.Errorf("%w; it said: %s", err, last)
	}
	return err
}
