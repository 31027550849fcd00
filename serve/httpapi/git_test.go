package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph/secret/secrettest"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/remote"
	"github.com/mindmount/mindmount/serve/remote/githubtest"
)

// ghToken is the GitHub token the tests hunt for afterwards.
const ghToken = "ghp_HTTPapiSECRET0123456789abcdefXYZ"

// gitHost is a bare repository served over smart HTTP by the real "git
// http-backend" on 127.0.0.1, behind Basic auth with ghToken, as GitHub
// serves a private repository.
type gitHost struct {
	bare string
	url  string
	// leak, when set, makes the host refuse every request with a 403 whose
	// message quotes the password it was sent.
	leak *atomic.Bool
}

func startGitHost(t *testing.T) *gitHost {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("git not installed")
	}
	bin := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(bin); err != nil {
		t.Skip("git http-backend not installed")
	}
	root := t.TempDir()
	bare := filepath.Join(root, "memory.git")
	git(t, root, "init", "-q", "--bare", "-b", "main", bare)
	git(t, bare, "config", "http.receivepack", "true")
	backend := &cgi.Handler{Path: bin, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=test"}}
	leak := new(atomic.Bool)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pw, ok := r.BasicAuth(); ok && leak.Load() {
			http.Error(w, "token "+pw+" may not access memory.git", http.StatusForbidden)
			return
		}
		if _, pw, ok := r.BasicAuth(); !ok || pw != ghToken {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return &gitHost{bare: bare, url: srv.URL + "/memory.git", leak: leak}
}

// lockedBuffer collects log lines from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// gitEnv is env with sync configured: the fake GitHub whose repositories
// clone from a real git host, and every log line and reply kept.
type gitEnv struct {
	*env
	gh      *githubtest.Server
	ghURL   string
	host    *gitHost
	logs    *lockedBuffer
	replies []string
}

func newGitEnv(t *testing.T) *gitEnv {
	t.Helper()
	gh := startGitHost(t)
	fake := &githubtest.Server{Token: ghToken, Login: "alice-gh", CloneURL: gh.url, Leaky: "leaky"}
	api := httptest.NewServer(fake)
	t.Cleanup(api.Close)
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	root := t.TempDir()
	e := newEnvWith(t, root, "ollama", 0, func(c *Config) {
		c.Logger = log
		c.Git = &remote.API{
			GitHubAPI:   api.URL,
			Credentials: func(id string) remote.Credentials { return remote.CredentialsFor(root, id) },
			Logger:      log,
		}
	})
	return &gitEnv{env: e, gh: fake, ghURL: api.URL, host: gh, logs: logs}
}

// call sends a request and returns its status and raw JSON reply, which
// it keeps for the final token hunt.
func (g *gitEnv) call(method, path, bearer, body string) (int, map[string]any, string) {
	g.t.Helper()
	resp := g.do(method, path, bearer, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		g.t.Fatalf("%s %s: content type %q: %s", method, path, ct, b)
	}
	g.replies = append(g.replies, string(b))
	var v map[string]any
	json.Unmarshal(b, &v)
	return resp.StatusCode, v, string(b)
}

func setupBody(user, token, name string) string {
	b, _ := json.Marshal(map[string]string{"userId": user, "githubToken": token, "repoName": name})
	return string(b)
}

// TestGitEndpoints drives /v1/git/* against a fake GitHub API whose
// repositories live on a real git server: a bad token is a clear 400, a
// user token acts for its user only, a good token creates a private
// repository and pushes, update syncs both ways, status has the
// reference's shape — and the token is afterwards in no reply, no log
// line and no file or git object of any repository.
func TestGitEndpoints(t *testing.T) {
	g := newGitEnv(t)
	alice, _, err := NewToken(g.root, "alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}

	// A token GitHub refuses: 400 saying so; nothing configured.
	code, v, _ := g.call("POST", "/v1/git/setup", alice, setupBody("alice", "wrong-"+ghToken, "memory"))
	if msg, _ := v["error"].(string); code != http.StatusBadRequest || v["ok"] != false || !strings.Contains(msg, "GitHub refused the token") {
		t.Fatalf("bad token: %d %v", code, v)
	}
	if _, err := remote.URL(host.UserDir(g.root, "alice")); err == nil {
		t.Fatal("a remote was set despite a bad token")
	}
	// No token, a bad repository name: 400.
	if code, v, _ := g.call("POST", "/v1/git/setup", alice, `{"userId":"alice","repoName":"memory"}`); code != http.StatusBadRequest {
		t.Fatalf("no token: %d %v", code, v)
	}
	if code, v, _ := g.call("POST", "/v1/git/setup", alice, setupBody("alice", ghToken, "../evil")); code != http.StatusBadRequest || !strings.Contains(v["error"].(string), "invalid repository name") {
		t.Fatalf("bad name: %d %v", code, v)
	}

	// alice's token on bob: 403 before GitHub hears of it.
	calls, _ := g.gh.Snapshot()
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/git/setup", setupBody("bob", ghToken, "memory")},
		{"POST", "/v1/git/update", `{"userId":"bob"}`},
		{"GET", "/v1/git/status?userId=bob", ""},
		{"GET", "/v1/git/status?userId=bob&detail=sync", ""},
	} {
		if code, v, _ := g.call(c.method, c.path, alice, c.body); code != http.StatusForbidden {
			t.Errorf("%s as bob with alice's token: %d %v", c.path, code, v)
		}
	}
	if now, _ := g.gh.Snapshot(); now != calls {
		t.Fatalf("GitHub was called for a forbidden request")
	}
	if _, err := os.Stat(filepath.Join(g.root, "credentials", "bob")); !os.IsNotExist(err) {
		t.Fatalf("bob has credentials: %v", err)
	}

	// Not connected yet: status says so, update is 409.
	code, v, raw := g.call("GET", "/v1/git/status?userId=alice", alice, "")
	if code != 200 || v["connected"] != false || v["last_push"] != nil || v["userId"] != "alice" {
		t.Fatalf("status before setup: %d %s", code, raw)
	}
	// The detail a cluster node reads: never pushed, so every commit is
	// ahead and the oldest is unpushed.
	code, v, raw = g.call("GET", "/v1/git/status?userId=alice&detail=sync", alice, "")
	if ahead, _ := v["ahead"].(float64); code != 200 || ahead < 1 || v["oldest_unpushed"] == nil || v["userId"] != "alice" {
		t.Fatalf("sync detail before setup: %d %s", code, raw)
	}
	if code, v, _ := g.call("POST", "/v1/git/update", alice, `{"userId":"alice"}`); code != http.StatusConflict {
		t.Fatalf("update before setup: %d %v", code, v)
	}

	// A good token: connected, a private repository created, pushed.
	code, v, raw = g.call("POST", "/v1/git/setup", alice, setupBody("alice", ghToken, "memory"))
	if code != 200 {
		t.Fatalf("setup: %d %s", code, raw)
	}
	assertGitShape(t, raw)
	if v["userId"] != "alice" || v["connected"] != true || v["github_username"] != "alice-gh" || v["repo_url"] != g.host.url || v["last_push"] == nil ||
		v["ok"] != true || v["username"] != "alice-gh" || v["repo_name"] != "memory" || v["configured_at"] == nil {
		t.Fatalf("setup reply: %s", raw)
	}
	if _, posts := g.gh.Snapshot(); len(posts) != 1 || posts[0]["private"] != true || posts[0]["name"] != "memory" {
		t.Fatalf("created on GitHub: %v", posts)
	}
	dir := host.UserDir(g.root, "alice")
	if local, pushed := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD")), strings.TrimSpace(git(t, g.host.bare, "rev-parse", "main")); local != pushed {
		t.Fatalf("not pushed: local %s, remote %s", local, pushed)
	}
	if url := strings.TrimSpace(git(t, dir, "config", "remote.origin.url")); url != g.host.url {
		t.Fatalf("remote URL %q", url)
	}
	// The token is kept 0600 outside the repository, where the daemon's
	// sync service looks.
	cred := remote.CredentialsFor(g.root, "alice").Path
	if fi, err := os.Stat(cred); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi, err)
	}
	if tok, err := remote.CredentialsFor(g.root, "alice").Lookup(g.host.url); err != nil || tok != ghToken {
		t.Fatalf("stored token: %v", err)
	}
	// Setting up again reuses the repository.
	if code, _, raw := g.call("POST", "/v1/git/setup", alice, setupBody("alice", ghToken, "memory")); code != 200 {
		t.Fatalf("setup again: %d %s", code, raw)
	}
	if _, posts := g.gh.Snapshot(); len(posts) != 1 {
		t.Fatalf("setup again created another repository: %v", posts)
	}

	// Update syncs both ways: a commit made elsewhere arrives, a local
	// commit leaves, with the stored token.
	clone := t.TempDir()
	git(t, clone, "clone", "-q", g.host.bare, "c")
	os.WriteFile(filepath.Join(clone, "c", "from-laptop.md"), []byte("# From the laptop\n"), 0o644)
	git(t, filepath.Join(clone, "c"), "add", "-A")
	git(t, filepath.Join(clone, "c"), "commit", "-q", "-m", "laptop")
	git(t, filepath.Join(clone, "c"), "push", "-q", "origin", "main")
	localCommit(t, g.h, "alice", "from-server.md", "# From the server\n")
	code, v, raw = g.call("POST", "/v1/git/update", alice, `{"userId":"alice"}`)
	if code != 200 || v["connected"] != true || v["last_push"] == nil {
		t.Fatalf("update: %d %s", code, raw)
	}
	assertGitShape(t, raw)
	if _, err := os.Stat(filepath.Join(dir, "from-laptop.md")); err != nil {
		t.Fatalf("update did not bring the remote commit: %v", err)
	}
	if local, pushed := strings.TrimSpace(git(t, dir, "rev-parse", "HEAD")), strings.TrimSpace(git(t, g.host.bare, "rev-parse", "main")); local != pushed {
		t.Fatalf("update did not push: local %s, remote %s", local, pushed)
	}
	git(t, g.host.bare, "cat-file", "-e", "main:from-server.md")

	// Status: the reference's shape; the admin may ask for anyone.
	code, v, raw = g.call("GET", "/v1/git/status?userId=alice", adminKey, "")
	if code != 200 || v["connected"] != true || v["github_username"] != "alice-gh" || v["repo_url"] != g.host.url {
		t.Fatalf("status: %d %s", code, raw)
	}
	assertGitShape(t, raw)
	if code, v, _ := g.call("GET", "/v1/git/status?userId=bob", adminKey, ""); code != 200 || v["connected"] != false {
		t.Fatalf("bob's status: %d %v", code, v)
	}

	// A GitHub error that quotes the token reaches the client scrubbed.
	code, v, _ = g.call("POST", "/v1/git/setup", alice, setupBody("alice", ghToken, "leaky"))
	if msg, _ := v["error"].(string); code != http.StatusBadGateway || !strings.Contains(msg, "lacks the repo scope") {
		t.Fatalf("leaky GitHub: %d %v", code, v)
	}

	// A git host whose refusal quotes the token: the update fails with a
	// 502 that says what the host said, scrubbed, and so does the sync
	// state behind GET /v1/git/status and "mindmount status".
	g.host.leak.Store(true)
	code, v, raw = g.call("POST", "/v1/git/update", alice, `{"userId":"alice"}`)
	if msg, _ := v["error"].(string); code != http.StatusBadGateway || !strings.Contains(msg, "may not access memory.git") {
		t.Fatalf("update against a host quoting the token: %d %s", code, raw)
	}
	g.host.leak.Store(false)
	if !strings.Contains(g.logs.String(), "git update failed") {
		t.Errorf("the failed update was not logged:\n%s", g.logs.String())
	}
	repo, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st := remote.StatusText(repo); !strings.Contains(st, "may not access memory.git") {
		t.Errorf("the sync state does not record the failure:\n%s", st)
	} else {
		g.replies = append(g.replies, st)
	}

	// The token nowhere: replies, log lines, any file or git object of
	// either user's repository (.git/config included) or the pushed one.
	for i, r := range g.replies {
		if strings.Contains(r, ghToken) {
			t.Errorf("reply %d holds the token: %s", i, r)
		}
	}
	if strings.Contains(g.logs.String(), ghToken) {
		t.Errorf("a log line holds the token:\n%s", g.logs.String())
	}
	if !strings.Contains(g.logs.String(), "git setup failed") {
		t.Errorf("failures were not logged:\n%s", g.logs.String())
	}
	for _, d := range []string{dir, host.UserDir(g.root, "bob"), g.host.bare} {
		secrettest.ScanRepo(t, d, []string{ghToken})
	}
}

// TestGitUnreachable: GitHub down is 502 with a reason, and the token is
// in neither the reply nor the log.
func TestGitUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	root := t.TempDir()
	e := newEnvWith(t, root, "ollama", 0, func(c *Config) {
		c.Logger = log
		c.Git = &remote.API{GitHubAPI: dead, Logger: log,
			Credentials: func(id string) remote.Credentials { return remote.CredentialsFor(root, id) }}
	})
	code, v := e.status("POST", "/v1/git/setup", adminKey, setupBody("bob", ghToken, ""))
	msg, _ := v["error"].(string)
	if code != http.StatusBadGateway || !strings.Contains(msg, "GitHub API GET /user") {
		t.Fatalf("GitHub down: %d %v", code, v)
	}
	if strings.Contains(msg, ghToken) || strings.Contains(logs.String(), ghToken) {
		t.Fatal("the token leaked")
	}
	secrettest.ScanRepo(t, host.UserDir(root, "bob"), []string{ghToken})
}

// assertGitShape checks a reply has exactly the reference's keys.
func assertGitShape(t *testing.T, raw string) {
	t.Helper()
	var v map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	var keys []string
	for k := range v {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// Ours and every field the reference server's setup and status answer.
	if got := strings.Join(keys, ","); got != "configured_at,connected,github_username,last_push,ok,repo_name,repo_url,userId,username" {
		t.Fatalf("reply keys %s: %s", got, raw)
	}
}

// localCommit commits a file in user's repository through its one
// writer, as the mount or consolidation would.
func localCommit(t *testing.T, h *host.Host, user, rel, data string) {
	t.Helper()
	ctx := context.Background()
	rt, release, err := h.Acquire(ctx, user)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	_, err = rt.Tracker.Apply(ctx, tracker.Change{Changes: []gitrepo.Change{{Path: rel, Data: []byte(data)}}, Message: "test: " + rel, Author: gitrepo.Author{Name: "t", Email: "t@x"}, Worktree: true})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGitUserSerializes: a setup or update holds its user's git lock until
// done; a second request of that user waits, and gets 503 when it gives up
// first; another user never waits.
func TestGitUserSerializes(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	admin := caller{admin: true}
	req := func(ctx context.Context) *http.Request {
		return httptest.NewRequestWithContext(ctx, "POST", "/v1/git/update", nil)
	}
	_, _, ctx, done, ok := e.api.gitUser(httptest.NewRecorder(), req(context.Background()), admin, "alice")
	if !ok || ctx.Err() != nil {
		t.Fatalf("first gitUser: ok %v, ctx %v", ok, ctx.Err())
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	w := httptest.NewRecorder()
	if _, _, _, _, ok := e.api.gitUser(w, req(short), admin, "alice"); ok || w.Code != http.StatusServiceUnavailable {
		t.Fatalf("second gitUser of alice while the first runs: ok %v, %d", ok, w.Code)
	}
	_, _, _, doneBob, ok := e.api.gitUser(httptest.NewRecorder(), req(context.Background()), admin, "bob")
	if !ok {
		t.Fatal("bob waited for alice's lock")
	}
	doneBob()
	done()
	if ctx.Err() == nil {
		t.Error("done left the request's context running")
	}
	again, cancel2 := context.WithTimeout(context.Background(), time.Second)
	defer cancel2()
	_, _, _, done, ok = e.api.gitUser(httptest.NewRecorder(), req(again), admin, "alice")
	if !ok {
		t.Fatal("alice's lock was not given back by done")
	}
	done()
}

// TestGitUpdateWithoutRemote: an update before any remote is 409 saying
// so, every time, and no sync is attempted: no warning in the log, no
// failure recorded for the background sync to retry.
func TestGitUpdateWithoutRemote(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e := newEnv(t, "ollama", func(c *Config) {
		c.Git = &remote.API{Logger: log}
		c.Logger = log
	})
	for range 3 {
		if code, v := e.status("POST", "/v1/git/update", adminKey, `{"userId":"alice"}`); code != http.StatusConflict || !strings.Contains(v["error"].(string), "setup") {
			t.Fatalf("update without a remote: %d %v", code, v)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if logs.Len() != 0 {
		t.Fatalf("warnings for an update without a remote:\n%s", logs.String())
	}
	rt, release, err := e.h.Acquire(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if st := remote.ReadState(rt.Repo); st.Failures != 0 || st.Failure != "" {
		t.Fatalf("a failure was recorded: %+v", st)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
