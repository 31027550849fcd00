package remote

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// testToken is the secret the tests hunt for everywhere afterwards.
const testToken = "ghp_SECRETtoken0123456789abcdefXYZ"

// gitServer is a bare repository served over smart HTTP by the real
// "git http-backend" on 127.0.0.1, behind Basic auth with testToken. It
// can be stopped and started again on the same address.
type gitServer struct {
	t    *testing.T
	bare string
	addr string
	mu   sync.Mutex
	srv  *http.Server

	handler http.Handler
	// leak, when set, makes the server refuse every request with a 403
	// whose message quotes the password it was sent, as careless git
	// hosts and proxies do: the token reaches go-git's error text.
	leak atomic.Bool
}

func startGitServer(t *testing.T) *gitServer {
	t.Helper()
	backend, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("git not installed")
	}
	bin := filepath.Join(strings.TrimSpace(string(backend)), "git-http-backend")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("git http-backend not installed")
	}
	root := t.TempDir()
	bare := filepath.Join(root, "memory.git")
	mustRun(t, root, "git", "init", "-q", "--bare", "-b", "main", bare)
	mustRun(t, bare, "git", "config", "http.receivepack", "true")
	s := &gitServer{t: t, bare: bare}
	s.handler = &cgi.Handler{
		Path: bin,
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=test"},
	}
	s.start()
	t.Cleanup(s.stop)
	return s
}

func (s *gitServer) URL() string { return "http://" + s.addr + "/memory.git" }

func (s *gitServer) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	addr := s.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	var err error
	for i := 0; i < 100; i++ { // the old socket may linger for a moment
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pw, ok := r.BasicAuth(); ok && s.leak.Load() {
			http.Error(w, "token "+pw+" may not access memory.git", http.StatusForbidden)
			return
		}
		if _, pw, ok := r.BasicAuth(); !ok || pw != testToken {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		s.handler.ServeHTTP(w, r)
	})
	s.srv = &http.Server{Handler: h}
	go s.srv.Serve(ln)
}

func (s *gitServer) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		s.srv.Close()
		s.srv = nil
	}
}

func mustRun(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// node is one machine: a repository with a running tracker (the write
// path of a daemon) and a Syncer using its lock.
type node struct {
	t      *testing.T
	dir    string
	r      *gitrepo.Repo
	g      *memgraph.Graph
	tr     *tracker.Tracker
	ls     *tracker.Listeners // the tracker's listener: tests add theirs
	s      *Syncer
	logs   *syncBuffer
	cancel context.CancelFunc
	done   chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// newNode makes dir a repository (with seed files committed when seed is
// set) and starts its tracker.
func newNode(t *testing.T, seed map[string]string) *node {
	t.Helper()
	dir := t.TempDir()
	r, err := gitrepo.Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	if seed != nil {
		var ch []gitrepo.Change
		for p, d := range seed {
			ch = append(ch, gitrepo.Change{Path: p, Data: []byte(d)})
		}
		if _, err := r.Apply(ch, "seed", gitrepo.Author{Name: "t", Email: "t@x"}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return startNode(t, dir, r)
}

func startNode(t *testing.T, dir string, r *gitrepo.Repo) *node {
	g, err := memgraph.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, dir: dir, r: r, g: g, logs: &syncBuffer{}}
	log := slog.New(slog.NewTextHandler(n.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	n.ls = &tracker.Listeners{}
	n.tr = tracker.New(g, r, tracker.Config{Debounce: 10 * time.Millisecond, Logger: log, Listener: n.ls.Listener()})
	n.s = New(r, Options{Credentials: Credentials{Token: testToken}, Writer: n.tr, Logger: log})
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel, n.done = cancel, make(chan struct{})
	go func() {
		defer close(n.done)
		n.tr.Run(ctx)
	}()
	<-n.tr.Ready()
	t.Cleanup(n.stop)
	return n
}

func (n *node) stop() {
	n.cancel()
	<-n.done
}

// write puts a file on disk and tells the tracker, as the mount does.
func (n *node) write(rel, data string) {
	n.t.Helper()
	p := filepath.Join(n.dir, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		n.t.Fatal(err)
	}
	n.tr.Touch(rel, "vim")
}

func (n *node) read(rel string) string {
	b, _ := os.ReadFile(filepath.Join(n.dir, filepath.FromSlash(rel)))
	return string(b)
}

func (n *node) flush() {
	n.t.Helper()
	if err := n.tr.Flush(context.Background()); err != nil {
		n.t.Fatal(err)
	}
}

func (n *node) git(args ...string) string {
	n.t.Helper()
	return mustRun(n.t, n.dir, "git", args...)
}

// assertNoToken checks that the token is in no file under dir (including
// every git object, decompressed) and in none of the texts.
func assertNoToken(t *testing.T, dir string, texts ...string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if d.Type()&os.ModeSocket != 0 {
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(testToken)) {
			t.Errorf("token found in %s", p)
		}
		return nil
	})
	if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		all := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
		all.Dir = dir
		out, err := all.Output()
		if err != nil {
			t.Fatalf("git cat-file: %v", err)
		}
		if bytes.Contains(out, []byte(testToken)) {
			t.Errorf("token found in a git object of %s", dir)
		}
	}
	for i, s := range texts {
		if strings.Contains(s, testToken) {
			t.Errorf("token found in text %d: %q", i, s)
		}
	}
}
