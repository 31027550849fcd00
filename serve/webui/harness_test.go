package webui

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/host"
)

func memoryFile(title, desc, fact string, uses ...string) string {
	s := "---\ndescription: " + desc + "\nstatus: active\n---\n# " + title + "\n\n## Fact\n" + fact + "\n\n## Access log\n"
	for _, u := range uses {
		s += "used, " + u + "\n"
	}
	return s
}

func gitT(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=seed", "GIT_AUTHOR_EMAIL=seed@test", "GIT_COMMITTER_NAME=seed", "GIT_COMMITTER_EMAIL=seed@test")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, data := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newRepo makes a mindmount repository with a read_only persona, a user
// profile and three memories, committed as "seed".
func newRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	gitT(t, dir, "init", "-q", "-b", "main")
	writeFiles(t, dir, map[string]string{
		"character.md":              "---\ndescription: The assistant's persona\nread_only: true\n---\n# Character\n\nYou are a careful assistant.\n",
		"user.md":                   "---\ndescription: Who the user is\n---\n# User\n\nThe user is Ada.\n",
		"user_memory/likes-tea.md":  memoryFile("Likes Tea", "Drinks green tea every morning", "You drink green tea every morning.", "01.11.26", "02.11.26"),
		"user_memory/porto.md":      memoryFile("Lives in Porto", "Lives in Porto", "You live in Porto.", "03.11.26", "04.11.26", "05.11.26"),
		"user_memory/cats.md":       memoryFile("Has a cat", "Has a cat named Miso", "You have a cat named Miso."),
		"character_memory/brief.md": memoryFile("Brief", "Answer briefly", "Keep answers short."),
		".gitignore":                ".mindmount/cache/\n",
	})
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-qm", "seed")
	return dir
}

func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startRuntime opens and starts the runtime of dir (no consolidation
// unless cfg says so); it is closed in t.Cleanup.
func startRuntime(t testing.TB, dir string, cfg host.RuntimeConfig) *host.Runtime {
	t.Helper()
	if cfg.Debounce == 0 {
		cfg.Debounce = 20 * time.Millisecond
		cfg.MaxWait = 200 * time.Millisecond
	}
	cfg.Logger = testLogger()
	rt, err := host.OpenRuntime(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := rt.Close(ctx); err != nil {
			t.Errorf("close runtime: %v", err)
		}
	})
	return rt
}

// site is a running web page of one repository with a logged-in browser.
type site struct {
	t   testing.TB
	srv *Server
	ts  *httptest.Server
	rt  *host.Runtime
	dir string
	c   *http.Client
}

// newSite serves a fresh repository (newRepo) and logs in.
func newSite(t testing.TB) *site {
	t.Helper()
	return newSiteSeeded(t, nil)
}

// newSiteSeeded is newSite with seed run on the repository before the
// runtime starts: commits made with git there race no tracker.
func newSiteSeeded(t testing.TB, seed func(dir string)) *site {
	t.Helper()
	dir := newRepo(t)
	if seed != nil {
		seed(dir)
	}
	return serveRepo(t, dir, startRuntime(t, dir, host.RuntimeConfig{}))
}

func serveRepo(t testing.TB, dir string, rt *host.Runtime) *site {
	t.Helper()
	return serveConfig(t, dir, Config{Single: rt})
}

// serveConfig is serveRepo with more of cfg (its Single is the runtime).
func serveConfig(t testing.TB, dir string, cfg Config) *site {
	t.Helper()
	rt := cfg.Single
	cfg.LoopbackHosts, cfg.Logger = true, testLogger()
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	s := &site{t: t, srv: srv, ts: ts, rt: rt, dir: dir, c: newClient()}
	resp, err := s.c.Get(srv.LoginURL(ts.Listener.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %s", resp.Status)
	}
	return s
}

// newClient is a browser: cookies kept, redirects followed.
func newClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

func (s *site) get(path string) (int, string) {
	s.t.Helper()
	return do(s.t, s.c, http.MethodGet, s.ts.URL+path, nil)
}

func do(t testing.TB, c *http.Client, method, u string, form url.Values, hdr ...string) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf is the session's CSRF token, read from a page's form.
func (s *site) csrf() string {
	s.t.Helper()
	_, body := s.get("/m/user_memory/cats.md") // its retire form
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		s.t.Fatalf("no CSRF token on a memory page:\n%s", body)
	}
	return m[1]
}

// post submits a form with the session's CSRF token (unless form sets
// "csrf" itself).
func (s *site) post(path string, form url.Values, hdr ...string) (int, string) {
	s.t.Helper()
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", s.csrf())
	}
	return do(s.t, s.c, http.MethodPost, s.ts.URL+path, form, hdr...)
}

func (s *site) git(args ...string) string {
	s.t.Helper()
	return gitT(s.t, s.dir, args...)
}

func (s *site) head() string { return s.git("rev-parse", "HEAD") }

// settle waits until the tracker committed what was written beside it.
func (s *site) settle() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.rt.Tracker.Settle(ctx); err != nil {
		s.t.Fatal(err)
	}
}

func (s *site) disk(rel string) string {
	s.t.Helper()
	b, err := os.ReadFile(filepath.Join(s.dir, rel))
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

func mustContain(t testing.TB, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	if t.Failed() {
		t.Logf("page:\n%s", body)
		t.FailNow()
	}
}

func mustNotContain(t testing.TB, body string, bad ...string) {
	t.Helper()
	for _, w := range bad {
		if strings.Contains(body, w) {
			t.Errorf("page holds %q", w)
		}
	}
	if t.Failed() {
		t.Logf("page:\n%s", body)
		t.FailNow()
	}
}
