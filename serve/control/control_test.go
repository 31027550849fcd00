package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// serve starts a control server on a fresh git directory; it stops with
// the test.
func serve(t *testing.T) (*Server, string) {
	t.Helper()
	return serveAt(t, t.TempDir())
}

// serveAt starts a control server on the git directory gitDir.
func serveAt(t *testing.T, gitDir string) (*Server, string) {
	t.Helper()
	s, err := Listen(gitDir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Serve(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return s, gitDir
}

// errTestNoDream stands for an error the serving side names (as
// serve/host names consolidation's).
var errTestNoDream = errors.New("no pending dream with that number")

// TestUnnamedErrorKeepsItsMessage: an error the serving side did not name
// reaches the asking side as its message alone, matched by no errors.Is;
// a named one is matched by errors.Is only once named; the protocol's own
// names are always known.
func TestUnnamedErrorKeepsItsMessage(t *testing.T) {
	errOther := errors.New("something else")
	e := &Error{Msg: "something else: 3", Kind: "test-unnamed"}
	if errors.Is(e, errOther) || e.Unwrap() != nil || e.Error() != "something else: 3" {
		t.Fatalf("unnamed kind: %v unwraps to %v", e, e.Unwrap())
	}
	if kindOf(fmt.Errorf("%w: 3", errOther)) != "" {
		t.Fatal("an unnamed error has a kind")
	}
	NameErrors(map[string]error{"test-unnamed": errOther})
	if !errors.Is(e, errOther) || kindOf(fmt.Errorf("%w: 3", errOther)) != "test-unnamed" {
		t.Fatal("a named error is not matched by its name")
	}
	if !errors.Is(&Error{Kind: "stopping"}, ErrStopping) {
		t.Fatal("the protocol's own kind is not known")
	}
}

// TestAskAndAnswer: a request reaches its verb's handler with its
// arguments; the answer's commit and data come back; a handler's typed
// error is recognised by errors.Is on the asking side; a verb nobody
// serves says so; with no daemon Ask says ErrNoDaemon; the socket is 0600
// and a second daemon cannot take it over.
func TestAskAndAnswer(t *testing.T) {
	ctx := context.Background()
	if _, err := Ask(ctx, t.TempDir(), Request{Verb: Sync}); !errors.Is(err, ErrNoDaemon) {
		t.Fatalf("no daemon: %v", err)
	}
	s, gitDir := serve(t)
	NameErrors(map[string]error{"test-no-dream": errTestNoDream})
	s.Handle(Approve, func(_ context.Context, req Request) (Answer, error) {
		if req.N == 7 {
			return Answer{}, fmt.Errorf("%w: 7", errTestNoDream)
		}
		return Answer{Commit: "abc" + strconv.Itoa(req.N), Data: json.RawMessage(`{"x":1}`)}, nil
	})
	a, err := Ask(ctx, gitDir, Request{Verb: Approve, N: 3})
	if err != nil || a.Commit != "abc3" || string(a.Data) != `{"x":1}` {
		t.Fatalf("approve 3: %+v, %v", a, err)
	}
	_, err = Ask(ctx, gitDir, Request{Verb: Approve, N: 7})
	var ce *Error
	if !errors.Is(err, errTestNoDream) || !errors.As(err, &ce) || ce.Msg != "no pending dream with that number: 7" {
		t.Fatalf("approve 7: %v, want ErrNoDream", err)
	}
	s.ready = time.Now() // no service is still starting
	if _, err := Ask(ctx, gitDir, Request{Verb: "format disk"}); !errors.Is(err, ErrNotServed) {
		t.Fatalf("unknown verb: %v, want ErrNotServed", err)
	}
	fi, err := os.Stat(filepath.Join(gitDir, SocketFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v, %v: want mode 0600", fi, err)
	}
	if _, err := Listen(gitDir, nil); err == nil {
		t.Fatal("a second daemon took over a live socket")
	}
}

// longDir makes a folder whose absolute path is n bytes long.
func longDir(t *testing.T, n int) string {
	t.Helper()
	d := t.TempDir()
	for len(d) < n {
		d = filepath.Join(d, strings.Repeat("d", min(60, max(1, n-len(d)-1))))
	}
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if len(d) != n {
		t.Fatalf("%d bytes, want %d: %s", len(d), n, d)
	}
	return d
}

// TestLongPath: a repository at a path far longer than a unix socket
// address holds (107 bytes) still gets its socket, at its usual place
// with its usual mode, reached by Ask; a second daemon cannot take it
// over; it is gone once the daemon stops.
func TestLongPath(t *testing.T) {
	gitDir := longDir(t, 200)
	sock := filepath.Join(gitDir, SocketFile)
	s, err := Listen(gitDir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("listen at a %d-byte path: %v", len(sock), err)
	}
	s.Handle(Sync, func(context.Context, Request) (Answer, error) { return Answer{Commit: "long"}, nil })
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Serve(ctx) })
	if a, err := Ask(context.Background(), gitDir, Request{Verb: Sync}); err != nil || a.Commit != "long" {
		t.Errorf("ask: %+v, %v", a, err)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Type() != os.ModeSocket || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket %s: %v, %v: want a socket of mode 0600", sock, fi, err)
	}
	if _, err := Listen(gitDir, nil); err == nil {
		t.Error("a second daemon took over a live socket")
	}
	cancel()
	wg.Wait()
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind after the daemon stopped: %v", err)
	}
	if _, err := Ask(context.Background(), gitDir, Request{Verb: Sync}); !errors.Is(err, ErrNoDaemon) {
		t.Errorf("after stop: %v, want ErrNoDaemon", err)
	}
}

// TestAnotherUserIsRefused: a process of another uid that reaches the
// socket (here made world-writable on purpose, so only the peer check
// stands in the way) is refused by the kernel's word on its uid, and its
// request never reaches the handler. Needs root to run the other uid.
func TestAnotherUserIsRefused(t *testing.T) {
	if dial := os.Getenv("CONTROL_TEST_DIAL"); dial != "" {
		_, err := Ask(context.Background(), dial, Request{Verb: Approve, N: 1})
		if errors.Is(err, ErrRefused) {
			os.Exit(3)
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as another uid")
	}
	s, gitDir := serve(t)
	var called atomic.Bool
	s.Handle(Approve, func(context.Context, Request) (Answer, error) { called.Store(true); return Answer{}, nil })
	// Every folder down to the socket is opened to all (a temporary
	// folder is often 0700): only the peer check stands in the way.
	for d := filepath.Join(gitDir, "mindmount"); d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			os.Chmod(d, fi.Mode().Perm()|0o055)
		}
	}
	os.Chmod(filepath.Join(gitDir, SocketFile), 0o666)
	// The test binary, where the other uid may run it.
	bin := filepath.Join(gitDir, "control.test")
	src, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(dst, src)
	src.Close()
	dst.Close()
	cmd := exec.Command(bin, "-test.run=^TestAnotherUserIsRefused$")
	cmd.Env = append(os.Environ(), "CONTROL_TEST_DIAL="+gitDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("uid 65534 was not refused: %v\n%s", err, out)
	}
	if called.Load() {
		t.Fatal("another user's request reached the handler")
	}
}

// TestStream: a stream verb answers first, then the connection is the
// door's: what the client sends (well past a request's size limit, and
// sent right behind the request) reaches the handler, and its replies
// come back; a stream verb's refusal is a typed error.
func TestStream(t *testing.T) {
	s, gitDir := serve(t)
	s.HandleStream(MCP, func(_ context.Context, req Request) (Answer, func(context.Context, net.Conn), error) {
		if req.Session == "no" {
			return Answer{}, nil, fmt.Errorf("%w: no such page", ErrNotServed)
		}
		return Answer{Commit: "hello"}, func(_ context.Context, c net.Conn) {
			io.Copy(c, c) // echo
			c.Close()
		}, nil
	})
	if _, _, err := Attach(context.Background(), gitDir, Request{Verb: MCP, Session: "no"}); !errors.Is(err, ErrNotServed) {
		t.Fatalf("refused stream: %v", err)
	}
	c, a, err := Attach(context.Background(), gitDir, Request{Verb: MCP})
	if err != nil || a.Commit != "hello" {
		t.Fatalf("attach: %+v, %v", a, err)
	}
	defer c.Close()
	big := strings.Repeat("x", 3*maxRequest) + "\n"
	go c.Write([]byte(big))
	got := make([]byte, len(big))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != big {
		t.Fatalf("echo: %d bytes, %v", len(got), err)
	}
}
