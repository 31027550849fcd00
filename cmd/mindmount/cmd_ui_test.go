package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// uiGet fetches u with client c and returns the status and body.
func uiGet(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func uiClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

// TestUICommand: the built mindmount ui prints the login URL as its first
// line; the URL logs one browser in and is spent; SIGTERM ends it with 0.
func TestUICommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir, "--user", "Ada")
	cmd, logs, line := startFirstLine(t, nil, "ui", dir, "--http", "127.0.0.1:0", "--consolidate=false")
	if !regexp.MustCompile(`^http://127\.0\.0\.1:[1-9][0-9]*/\?token=[A-Za-z0-9_-]{43}$`).MatchString(line) {
		t.Fatalf("first line %q, want the login URL", line)
	}
	c := uiClient()
	if code, body := uiGet(t, c, line); code != http.StatusOK || !strings.Contains(body, "<h1>Memories</h1>") {
		t.Fatalf("login: %d\n%s", code, body)
	}
	if code, _ := uiGet(t, uiClient(), line); code != http.StatusForbidden {
		t.Fatalf("the login URL worked twice: %d", code)
	}
	base, _, _ := strings.Cut(line, "/?token=")
	if code, body := uiGet(t, c, base+"/m/user.md"); code != http.StatusOK || !strings.Contains(body, "user.md") {
		t.Fatalf("user.md: %d", code)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, logs)
	}
}

// TestUIRefusesNonLoopback: a non-loopback --http is refused unless
// --insecure-listen says so.
func TestUIRefusesNonLoopback(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir, "--user", "Ada")
	var out, errb bytes.Buffer
	if code := run([]string{"ui", dir, "--http", "0.0.0.0:0", "--consolidate=false"}, &out, &errb); code == 0 {
		t.Fatalf("ui on 0.0.0.0 started:\n%s", out.String())
	}
	if !strings.Contains(errb.String(), "not a loopback address") || strings.Contains(out.String(), "token=") {
		t.Fatalf("stdout %q, stderr %q", out.String(), errb.String())
	}
}

// TestUIRefusesBeforeOpening: ui refused its address (not loopback, or
// taken) before it opens the repository: no line about the repository's
// files (here an invalid one, "file not committed … writer=editor")
// comes before the refusal.
func TestUIRefusesBeforeOpening(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir, "--user", "Ada")
	if err := os.WriteFile(filepath.Join(dir, "user_memory", "broken.md"), []byte("---\ndescription: [\n---\nbroken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, addr := range []string{"0.0.0.0:0", taken.Addr().String()} {
		var out, errb bytes.Buffer
		if code := run([]string{"ui", dir, "--http", addr, "--consolidate=false"}, &out, &errb); code == 0 {
			t.Fatalf("ui on %s started:\n%s", addr, out.String())
		}
		if strings.Contains(errb.String(), "writer=") || strings.Contains(errb.String(), "not committed") {
			t.Errorf("ui on %s: a line about the repository before the refusal:\n%s", addr, errb.String())
		}
	}
}

// TestServeUIUsersApart: serve --http serves the web page at /ui/; alice
// logs in with her token and reaches her memory, never bob's.
func TestServeUIUsersApart(t *testing.T) {
	root := t.TempDir()
	reachable(root)
	runCmd(t, append([]string{"users", "add", root, "alice"}, ownUID(aliceUID)...)...)
	runCmd(t, append([]string{"users", "add", root, "bob"}, ownUID(bobUID)...)...)
	tok := strings.TrimSpace(runCmd(t, "users", "token", root, "alice"))
	runCmd(t, "users", "token", root, "bob")
	_, logs, base := startServeHTTP(t, root, []string{"MINDMOUNT_API_KEY=", "MINDMOUNT_LLM=none"}, "--consolidate=false")
	c := uiClient()
	code, body := uiGet(t, c, base+"/ui/")
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		t.Fatalf("/ui/ without a session: %d, want the login form\n%s\n%s", code, body, logs)
	}
	resp, err := c.PostForm(base+"/ui/login", url.Values{"csrf": {m[1]}, "token": {tok}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/ui/u/alice/" {
		t.Fatalf("alice's login: %s at %s\n%s", resp.Status, resp.Request.URL, logs)
	}
	if code, _ := uiGet(t, c, base+"/ui/u/bob/"); code != http.StatusForbidden {
		t.Fatalf("alice opens bob's memory: %d, want 403", code)
	}
	if code, _ := uiGet(t, c, base+"/ui/u/alice/log"); code != http.StatusOK {
		t.Fatalf("alice's timeline: %d", code)
	}
	// Her token is an agent's (read,write): the page lets her read and
	// edit, not approve a dream (refused before the form is looked at).
	resp, err = c.PostForm(base+"/ui/u/alice/review/approve", url.Values{"csrf": {"any"}, "n": {"1"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "review scope") {
		t.Fatalf("approve with alice's agent token: %s %s", resp.Status, b)
	}
	// Every token revoked: the page stays closed to whatever is typed,
	// as the API does (one decision, latched when serve started).
	runCmd(t, "users", "token", "revoke", root, "alice")
	runCmd(t, "users", "token", "revoke", root, "bob")
	c = uiClient()
	_, body = uiGet(t, c, base+"/ui/login")
	if m = regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body); m == nil {
		t.Fatalf("no login form:\n%s", body)
	}
	resp, err = c.PostForm(base+"/ui/login", url.Values{"csrf": {m[1]}, "token": {"anything"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("login with any string after the last token was revoked: %s at %s", resp.Status, resp.Request.URL)
	}
}
