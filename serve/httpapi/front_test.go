package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/webui"
)

// fakeWorkers stands for serve's workers behind a front: each user's
// "worker" answers 200 with its user's name and records what it received,
// so a test sees exactly what crossed the boundary.
type fakeWorkers struct {
	users []string
	mu    sync.Mutex
	got   []*http.Request // the requests the workers received
	// block holds a user's GET requests open (an MCP stream) until the
	// channel is closed.
	block map[string]chan struct{}
}

func (f *fakeWorkers) Forward(_ context.Context, id string) (http.Handler, func(), error) {
	for _, u := range f.users {
		if u == id {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				f.mu.Lock()
				f.got = append(f.got, r.Clone(context.Background()))
				block := f.block[id]
				f.mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				if block != nil && r.Method == http.MethodGet {
					w.WriteHeader(http.StatusOK)
					w.(http.Flusher).Flush()
					select {
					case <-block:
					case <-r.Context().Done():
					}
					return
				}
				fmt.Fprintf(w, `{"worker":%q}`, id)
			}), func() {}, nil
		}
	}
	return nil, nil, fmt.Errorf("%w %q", host.ErrUnknownUser, id)
}

func (f *fakeWorkers) Users() []host.User {
	var out []host.User
	for _, u := range f.users {
		out = append(out, host.User{Entry: host.Entry{ID: u}})
	}
	return out
}

func (f *fakeWorkers) Lookup(id string) (host.User, error) {
	for _, u := range f.Users() {
		if u.ID == id {
			return u, nil
		}
	}
	return host.User{}, fmt.Errorf("%w %q", host.ErrUnknownUser, id)
}

func (f *fakeWorkers) Acquire(context.Context, string) (*host.Runtime, func(), error) {
	return nil, nil, errors.New("served by the workers")
}

func (f *fakeWorkers) received() []*http.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*http.Request{}, f.got...)
}

// front is serve's HTTP front as cmd wires it: one Auth shared by the
// API, /mcp (forwarded) and the web page's login, the web page's pages
// forwarded too, listening on addr ("127.0.0.1:0" or "0.0.0.0:0").
type front struct {
	t       *testing.T
	root    string
	base    string
	workers *fakeWorkers
}

func newFront(t *testing.T, root, key, addr string, mod ...func(*Config)) *front {
	t.Helper()
	fw := &fakeWorkers{users: []string{"alice", "bob"}, block: map[string]chan struct{}{}}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	auth := NewAuth(key, OpenTokens(root), false)
	auth.RequireFor(ln.Addr())
	ui, err := webui.New(webui.Config{Users: fw, Prefix: "/ui", Logger: quietLog(), Forward: fw.Forward, Verify: auth.Login})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Forward: fw, List: fw, UI: ui, Auth: auth, Logger: quietLog()}
	for _, m := range mod {
		m(&cfg)
	}
	srv := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return &front{t: t, root: root, base: fmt.Sprintf("http://127.0.0.1:%d", ln.Addr().(*net.TCPAddr).Port), workers: fw}
}

// call sends a request with cred as its Bearer credential ("" for none)
// and returns its status, not following redirects.
func (f *front) call(c *http.Client, method, path, cred, body string, header ...string) int {
	f.t.Helper()
	req, err := http.NewRequest(method, f.base+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if cred != "" {
		req.Header.Set("Authorization", "Bearer "+cred)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func browser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

var loginCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// login logs a new browser in to /ui/ with cred and returns it with the
// login form's answer (303 when logged in).
func (f *front) login(cred string) (*http.Client, int) {
	f.t.Helper()
	c := browser()
	resp, err := c.Get(f.base + "/ui/login")
	if err != nil {
		f.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := loginCSRF.FindSubmatch(b)
	if m == nil {
		f.t.Fatalf("no login form: %d %s", resp.StatusCode, b)
	}
	resp, err = c.PostForm(f.base+"/ui/login", url.Values{"csrf": {string(m[1])}, "token": {cred}})
	if err != nil {
		f.t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return c, resp.StatusCode
}

// TestOneAuthDecision: the API, MCP over HTTP and the web page's login
// answer every case alike, because they ask one function: a non-loopback
// listener without credentials refuses everyone; a loopback one whose
// last token was revoked stays closed; the admin key opens every user's
// pages; a user token opens its own user's only. (The web page once kept
// a second copy of the rule, open whenever no key and no token existed.)
func TestOneAuthDecision(t *testing.T) {
	const key = "front-admin-key-0123456789"
	type want struct{ ui, api, mcp int }
	// 303: the page sends a browser without a session to the login.
	refused := want{303, 401, 401}
	served := want{200, 200, 200}
	other := want{403, 403, 403}
	cases := []struct {
		name string
		addr string
		key  string
		// setup makes the credentials before the front starts and
		// returns the one a client presents; after runs once it started.
		setup func(root string) string
		after func(root string)
		user  string
		want  want
	}{
		{name: "loopback, never any credential: open", addr: "127.0.0.1:0",
			setup: func(string) string { return "anything" }, user: "bob", want: served},
		{name: "non-loopback, no credentials", addr: "0.0.0.0:0",
			setup: func(string) string { return "anything" }, user: "alice", want: refused},
		{name: "non-loopback, no credentials, nothing sent", addr: "0.0.0.0:0",
			setup: func(string) string { return "" }, user: "alice", want: refused},
		{name: "last token revoked", addr: "127.0.0.1:0",
			setup: func(root string) string { tok, _, _ := NewToken(root, "alice", time.Now()); return tok },
			after: func(root string) { RevokeTokens(root, "alice", "") }, user: "alice", want: refused},
		{name: "last token revoked, any string", addr: "127.0.0.1:0",
			setup: func(root string) string { NewToken(root, "alice", time.Now()); return "anything" },
			after: func(root string) { RevokeTokens(root, "alice", "") }, user: "alice", want: refused},
		{name: "token file unreadable at start", addr: "127.0.0.1:0",
			setup: func(root string) string {
				os.WriteFile(filepath.Join(root, TokensFile), []byte("{not json"), 0o600)
				return "anything"
			}, user: "alice", want: refused},
		{name: "admin key", addr: "127.0.0.1:0", key: key,
			setup: func(string) string { return key }, user: "bob", want: served},
		{name: "wrong admin key", addr: "0.0.0.0:0", key: key,
			setup: func(string) string { return key + "x" }, user: "bob", want: refused},
		{name: "user token, own pages", addr: "0.0.0.0:0",
			setup: func(root string) string { tok, _, _ := NewToken(root, "alice", time.Now()); return tok },
			user:  "alice", want: served},
		{name: "user token, another user's pages", addr: "0.0.0.0:0",
			setup: func(root string) string { tok, _, _ := NewToken(root, "alice", time.Now()); return tok },
			user:  "bob", want: other},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for _, id := range []string{"alice", "bob"} {
				newUser(t, root, id, 0)
			}
			cred := tc.setup(root)
			f := newFront(t, root, tc.key, tc.addr)
			if tc.after != nil {
				tc.after(root)
			}
			var got want
			// A refused login leaves the browser without a session: the
			// page then sends it to the login (303).
			c, code := f.login(cred)
			if code != http.StatusSeeOther && code != http.StatusUnauthorized {
				t.Fatalf("login: %d", code)
			}
			got.ui = f.call(c, "GET", "/ui/u/"+tc.user+"/", "", "")
			got.api = f.call(http.DefaultClient, "GET", "/v1/recall?q=tea&userId="+tc.user, cred, "")
			got.mcp = f.call(http.DefaultClient, "POST", "/mcp", cred, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "X-Mindmount-User", tc.user)
			if got != tc.want {
				t.Errorf("ui, api, mcp = %v, want %v", got, tc.want)
			}
			for _, r := range f.workers.received() {
				if r.Header.Get("X-Mindmount-User") != tc.user && r.Header.Get("X-Mindmount-Ui-User") != tc.user {
					t.Errorf("a worker got a request for another user: %v", r.Header)
				}
			}
		})
	}
}

// TestFrontForwardsNoCredential: what a user's worker receives from the
// front carries no credential — no Authorization header, no session
// cookie — whichever front it came through, only the user it acts for
// and the caller's scope.
func TestFrontForwardsNoCredential(t *testing.T) {
	root := t.TempDir()
	for _, id := range []string{"alice", "bob"} {
		newUser(t, root, id, 0)
	}
	tok, _, err := NewToken(root, "alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f := newFront(t, root, "", "127.0.0.1:0")
	if code := f.call(http.DefaultClient, "GET", "/v1/recall?q=tea&userId=alice", tok, ""); code != 200 {
		t.Fatalf("recall: %d", code)
	}
	if code := f.call(http.DefaultClient, "POST", "/mcp", tok, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); code != 200 {
		t.Fatalf("mcp: %d", code)
	}
	if code := f.call(http.DefaultClient, "POST", "/v1/chat", tok, `{"userId":"alice","message":"hi"}`); code != 200 {
		t.Fatalf("chat: %d", code)
	}
	c, code := f.login(tok)
	if code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}
	if code := f.call(c, "GET", "/ui/u/alice/", "", ""); code != 200 {
		t.Fatalf("page: %d", code)
	}
	got := f.workers.received()
	if len(got) != 4 {
		t.Fatalf("the workers received %d requests, want 4", len(got))
	}
	for _, r := range got {
		for name, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, tok) || strings.Contains(v, strings.TrimPrefix(tok, tokenPrefix)) {
					t.Errorf("%s %s: the worker received the token in %s", r.Method, r.URL, name)
				}
			}
		}
		if r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != "" {
			t.Errorf("%s %s: the worker received credentials: %v", r.Method, r.URL, r.Header)
		}
	}
}

// TestFrontScopes: the front refuses an approval from a token without
// the review scope before any worker hears of it, on the API and the
// web page alike, and tells the worker the caller's scope for MCP's
// writing tools; a review token's approval reaches the worker.
func TestFrontScopes(t *testing.T) {
	root := t.TempDir()
	for _, id := range []string{"alice", "bob"} {
		newUser(t, root, id, 0)
	}
	agent, _, _ := NewToken(root, "alice", time.Now())
	reader, _, _ := NewScopedToken(root, "alice", ScopeRead, time.Now())
	reviewer, _, _ := NewScopedToken(root, "alice", ScopeReview, time.Now())
	f := newFront(t, root, "", "127.0.0.1:0")
	if code := f.call(http.DefaultClient, "POST", "/v1/review/1/approve", agent, `{"userId":"alice"}`); code != 403 {
		t.Errorf("approve with the agent's token: %d", code)
	}
	if n := len(f.workers.received()); n != 0 {
		t.Fatalf("a refused approval reached the worker (%d requests)", n)
	}
	if code := f.call(http.DefaultClient, "POST", "/v1/review/1/approve", reviewer, `{"userId":"alice"}`); code != 200 {
		t.Errorf("approve with a review token: %d", code)
	}
	if code := f.call(http.DefaultClient, "POST", "/mcp", reader, `{}`); code != 200 {
		t.Errorf("mcp with a read token: %d", code)
	}
	got := f.workers.received()
	if len(got) != 2 || got[1].Header.Get(ScopeHeader) != "read" {
		t.Fatalf("the worker was not told the read token's scope: %d requests", len(got))
	}
	// The web page: the agent's token logs in and reads, but its
	// approval is refused; a review token's goes through.
	c, code := f.login(agent)
	if code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}
	if code := f.call(c, "GET", "/ui/u/alice/", "", ""); code != 200 {
		t.Errorf("page: %d", code)
	}
	if code := f.call(c, "POST", "/ui/u/alice/review/approve", "", "n=1&csrf=x", "Content-Type", "application/x-www-form-urlencoded"); code != 403 {
		t.Errorf("page approve with the agent's token: %d", code)
	}
	if code := f.call(c, "POST", "/ui/u/alice/edit", "", "csrf=x", "Content-Type", "application/x-www-form-urlencoded"); code != 200 {
		t.Errorf("page edit with the agent's token: %d", code)
	}
	c, _ = f.login(reader)
	if code := f.call(c, "POST", "/ui/u/alice/edit", "", "csrf=x", "Content-Type", "application/x-www-form-urlencoded"); code != 403 {
		t.Errorf("page edit with a read token: %d", code)
	}
	c, _ = f.login(reviewer)
	if code := f.call(c, "POST", "/ui/u/alice/review/approve", "", "n=1&csrf=x", "Content-Type", "application/x-www-form-urlencoded"); code != 200 {
		t.Errorf("page approve with a review token: %d", code)
	}
}

// TestFrontCaps: one user's open streams are capped — one more is 429
// with a message, while another user is still served, and the user is
// served again once a stream ends — and the front holds at most MaxConns
// connections: one more is answered 503 and closed, and a new one is
// served once a connection closes.
func TestFrontCaps(t *testing.T) {
	root := t.TempDir()
	for _, id := range []string{"alice", "bob"} {
		newUser(t, root, id, 0)
	}
	alice, _, _ := NewToken(root, "alice", time.Now())
	bob, _, _ := NewToken(root, "bob", time.Now())
	f := newFront(t, root, "", "127.0.0.1:0", func(c *Config) { c.MaxPerUser, c.MaxConns = 3, 8 })
	release := make(chan struct{})
	f.workers.mu.Lock()
	f.workers.block["alice"] = release
	f.workers.mu.Unlock()
	// A deadline stops a stream the cap failed to refuse.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream := func(tok string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, "GET", f.base+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	var streams []*http.Response
	for range 3 {
		resp := stream(alice)
		if resp.StatusCode != 200 {
			t.Fatalf("stream: %d", resp.StatusCode)
		}
		streams = append(streams, resp)
	}
	resp := stream(alice)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "streams open") {
		t.Fatalf("a fourth stream of alice: %d %s", resp.StatusCode, b)
	}
	if code := f.call(http.DefaultClient, "GET", "/v1/recall?q=x", bob, ""); code != 200 {
		t.Fatalf("bob while alice is at her cap: %d", code)
	}
	close(release)
	for _, s := range streams {
		io.Copy(io.Discard, s.Body)
		s.Body.Close()
	}
	if code := f.call(http.DefaultClient, "GET", "/v1/recall?q=x", alice, ""); code != 200 {
		t.Fatalf("alice after her streams ended: %d", code)
	}

	// Connections: hold 8 open (keep-alive clients and the ones above
	// may hold some; close them first), then one more is refused.
	http.DefaultClient.CloseIdleConnections()
	var conns []net.Conn
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	addr := strings.TrimPrefix(f.base, "http://")
	get := func(c net.Conn) string {
		fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		buf := make([]byte, 4096)
		n, _ := c.Read(buf)
		return string(buf[:n])
	}
	refused := 0
	for range 12 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if strings.HasPrefix(get(c), "HTTP/1.1 503") {
			refused++
		}
	}
	if refused < 4 {
		t.Fatalf("%d of 12 connections refused with a cap of 8", refused)
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if strings.HasPrefix(get(c), "HTTP/1.1 200") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no connection served after the others closed")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFrontRoutes: the front answers an unknown path 404 and a wrong
// method 405 with Allow, as the API it forwards to does, before it asks
// for credentials or a user; known endpoints are forwarded.
func TestFrontRoutes(t *testing.T) {
	root := t.TempDir()
	for _, id := range []string{"alice", "bob"} {
		newUser(t, root, id, 0)
	}
	tok, _, _ := NewToken(root, "alice", time.Now())
	f := newFront(t, root, "", "127.0.0.1:0")
	cases := []struct {
		method, path, cred string
		want               int
		allow              string
	}{
		{"GET", "/v2/whatever", tok, 404, ""},
		{"GET", "/v2/whatever", "", 404, ""},
		{"POST", "/nothing", tok, 404, ""},
		{"GET", "/v1/chat", tok, 405, "POST"},
		{"OPTIONS", "/v1/chat", "", 405, "POST"},
		{"POST", "/v1/recall", tok, 405, "GET"},
		{"DELETE", "/v1/git/update", tok, 405, "POST"},
		{"POST", "/health", "", 405, "GET"},
		{"GET", "/v1/recall?q=x", tok, 200, ""},
		{"GET", "/v1/recall?q=x", "", 401, ""},
		{"POST", "/v1/bye", tok, 200, ""},
		{"GET", "/v1/git/status", tok, 200, ""},
		{"GET", "/v1/review/3", tok, 200, ""},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(tc.method, f.base+tc.path, strings.NewReader(`{}`))
		if tc.cred != "" {
			req.Header.Set("Authorization", "Bearer "+tc.cred)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d Allow %q, want %d Allow %q (%s)", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), tc.want, tc.allow, b)
		}
	}
}
