package webui

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/serve/host"
)

// TestLoginTokenOnce: the printed URL logs one browser in with an
// HttpOnly, SameSite=Strict cookie and sends it on without the token; the
// same URL in another browser is refused, and so is a wrong token or no
// session at all.
func TestLoginTokenOnce(t *testing.T) {
	dir := newRepo(t)
	rt := startRuntime(t, dir, host.RuntimeConfig{})
	srv, err := New(Config{Single: rt, LoopbackHosts: true, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	loginURL := srv.LoginURL(ts.Listener.Addr().String())
	if !strings.HasPrefix(loginURL, ts.URL+"/?token=") {
		t.Fatalf("login URL %q", loginURL)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	if code, _ := do(t, noRedirect, http.MethodGet, ts.URL+"/", nil); code != http.StatusUnauthorized {
		t.Fatalf("no session: %d, want 401", code)
	}
	if code, _ := do(t, noRedirect, http.MethodGet, ts.URL+"/?token=wrong", nil); code != http.StatusForbidden {
		t.Fatalf("wrong token: %d, want 403", code)
	}
	resp, err := noRedirect.Get(loginURL + "&x=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/?x=1" {
		t.Fatalf("login: %s to %q, want 303 to /?x=1 (the token dropped)", resp.Status, resp.Header.Get("Location"))
	}
	var c *http.Cookie
	for _, k := range resp.Cookies() {
		if k.Name == cookieName {
			c = k
		}
	}
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || len(c.Value) < 40 {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/, a long random value", c)
	}
	if c.Value == strings.TrimPrefix(loginURL, ts.URL+"/?token=") {
		t.Fatal("the session cookie is the login token")
	}
	// The token is spent: another browser is refused.
	if code, _ := do(t, newClient(), http.MethodGet, loginURL, nil); code != http.StatusForbidden {
		t.Fatalf("login token reused: %d, want 403", code)
	}
	// The logged-in browser reaches the pages.
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/log", nil)
	req.AddCookie(c)
	resp, err = noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("with the cookie: %s", resp.Status)
	}
}

// TestSecurityHeaders: every answer carries the CSP and its companions,
// pages are not cached.
func TestSecurityHeaders(t *testing.T) {
	s := newSite(t)
	for _, p := range []string{"/", "/m/user.md", "/log", "/search?q=tea", "/status", "/graph", "/edit/user.md", "/static/style.css", "/nowhere"} {
		resp, err := s.c.Get(s.ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if h.Get("Content-Security-Policy") != csp || !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP %q", p, h.Get("Content-Security-Policy"))
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("%s: headers %v", p, h)
		}
		if !strings.HasPrefix(p, "/static/") && h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q", p, h.Get("Cache-Control"))
		}
	}
}

// TestCSRFRefused: a POST without the token, with another token, from
// another site (Origin or Sec-Fetch-Site) or without a session is 403 (401
// without a session) and changes nothing.
func TestCSRFRefused(t *testing.T) {
	s := newSite(t)
	head := s.head()
	tok := s.csrf()
	form := func(csrf string) url.Values {
		v := url.Values{"path": {"user_memory/cats.md"}}
		if csrf != "-" {
			v.Set("csrf", csrf)
		}
		return v
	}
	cases := []struct {
		name string
		form url.Values
		hdr  []string
	}{
		{"missing", form("-"), nil},
		{"empty", form(""), nil},
		{"wrong", form(tok[:len(tok)-1] + "x"), nil},
		{"cross-site Origin", form(tok), []string{"Origin", "https://evil.example"}},
		{"cross-site fetch", form(tok), []string{"Sec-Fetch-Site", "cross-site"}},
		{"same-site other origin", form(tok), []string{"Sec-Fetch-Site", "same-site"}},
		{"typed into the address bar", form(tok), []string{"Sec-Fetch-Site", "none"}},
		{"null origin", form(tok), []string{"Origin", "null"}},
	}
	for _, c := range cases {
		if code, _ := do(t, s.c, http.MethodPost, s.ts.URL+"/retire", c.form, c.hdr...); code != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", c.name, code)
		}
	}
	// Another browser without a session, with a stolen token.
	if code, _ := do(t, newClient(), http.MethodPost, s.ts.URL+"/retire", form(tok)); code != http.StatusUnauthorized {
		t.Errorf("no session: %d, want 401", code)
	}
	if s.head() != head {
		t.Fatal("a refused POST committed")
	}
	// The same form with the token and this origin works.
	if code, _ := s.post("/retire", form(tok), "Origin", s.ts.URL, "Sec-Fetch-Site", "same-origin"); code != http.StatusOK {
		t.Fatalf("a good POST: %d", code)
	}
}

// TestLoopbackHostOnly: a loopback ui answers only requests whose Host
// names the loopback (a DNS-rebinding page sends its own name).
func TestLoopbackHostOnly(t *testing.T) {
	s := newSite(t)
	u, _ := url.Parse(s.ts.URL)
	cookies := s.c.Jar.Cookies(u)
	for host, want := range map[string]int{"evil.example": 403, "evil.example:80": 403, "10.0.0.1:7420": 403, "localhost:7420": 200, "127.0.0.1": 200, "[::1]:7420": 200} {
		req, _ := http.NewRequest(http.MethodGet, s.ts.URL+"/log", nil)
		req.Host = host
		for _, c := range cookies {
			req.AddCookie(c)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// TestRedirectStaysHome: an action's "next" never leads off the page.
func TestRedirectStaysHome(t *testing.T) {
	s := newSite(t)
	noRedirect := &http.Client{Jar: s.c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)", "/log"} {
		form := url.Values{"path": {"user_memory/cats.md"}, "csrf": {s.csrf()}, "next": {next}}
		req, _ := http.NewRequest(http.MethodPost, s.ts.URL+"/retire", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		want := "/" // anything but a page of this repository goes home
		if next == "/log" {
			want = "/log"
		}
		if loc == nil || loc.Host != "" || loc.Scheme != "" || loc.Path != want || strings.Contains(resp.Header.Get("Location"), "evil") {
			t.Errorf("next %q: redirected to %q, want %s", next, resp.Header.Get("Location"), want)
		}
		s.post("/reactivate", url.Values{"path": {"user_memory/cats.md"}})
	}
}

// xssSeed commits memories and a commit message carrying script in every
// place a person or agent can put text.
func xssSeed(t testing.TB) func(dir string) {
	return func(dir string) {
		writeFiles(t, dir, map[string]string{
			"user_memory/xss.md": "---\ndescription: <script>alert('desc')</script>\"><img src=x onerror=alert(1)>\ntopic: x\n---\n" +
				"# <img src=x onerror=alert('title')>\n\n## Fact\n<script>alert('body')</script>\n\n\"><img src=x onerror=alert('img')>\n\n" +
				"[click me](javascript:alert('link')) <a href=\"javascript:alert('raw')\">raw link</a>\n\n<iframe src=\"javascript:alert('frame')\"></iframe>\n\n## Access log\nused, 01.12.26\n",
			"user_memory/\"><svg onload=alert('name')>.md": memoryFile("Name", "<b>bold</b> name", "Named badly."),
		})
		gitT(t, dir, "add", "-A")
		gitT(t, dir, "commit", `--author=x" onmouseover="alert('author') <a@b>`, "-qm",
			"<img src=x onerror=alert('subject')>\n\n<script>alert('msgbody')</script>\n\nMindmount-User: <script>alert('trailer')</script>")
	}
}

// dangerous matches markup the XSS payloads would leave unescaped.
var dangerous = regexp.MustCompile(`(?i)<script>alert|<img[^>]*onerror|<svg[^>]*onload|href="javascript:|<iframe|src="javascript:|" onmouseover="`)

// TestXSSEscaped: the payloads in a memory's description, title, body,
// file name and a commit's author, subject, body and trailer come out as
// text on every page, and markdown's raw HTML and javascript: links are
// dropped.
func TestXSSEscaped(t *testing.T) {
	s := newSiteSeeded(t, xssSeed(t))
	name := "user_memory/\"><svg onload=alert('name')>.md"
	pages := []string{"/", "/?retired=1", "/m/user_memory/xss.md", "/m/" + pathEscape(name), "/log", "/search?q=alert+script+onerror", "/status", "/graph",
		"/edit/user_memory/xss.md", "/search?q=" + url.QueryEscape("<script>alert('q')</script>"), "/log?author=" + url.QueryEscape(`"><script>alert('a')</script>`)}
	for _, p := range pages {
		code, body := s.get(p)
		if code != http.StatusOK {
			t.Errorf("%s: %d", p, code)
			continue
		}
		// The page's own <script src> is the only script element.
		stripped := strings.Replace(body, `<script src="/static/live.js" defer></script>`, "", 1)
		if m := dangerous.FindString(stripped); m != "" {
			t.Errorf("%s holds %q unescaped", p, m)
		}
	}
	_, body := s.get("/m/user_memory/xss.md")
	mustContain(t, body, "&lt;script&gt;alert(&#39;desc&#39;)&lt;/script&gt;", "raw HTML omitted", "click me")
	_, body = s.get("/log")
	mustContain(t, body, "&lt;img src=x onerror=alert(&#39;subject&#39;)&gt;", "&lt;script&gt;alert(&#39;trailer&#39;)&lt;/script&gt;")
}

// fakeUsers is serve's host for two users.
type fakeUsers map[string]*host.Runtime

func (f fakeUsers) Acquire(_ context.Context, id string) (*host.Runtime, func(), error) {
	rt, ok := f[id]
	if !ok {
		return nil, nil, errors.New("no such user")
	}
	return rt, func() {}, nil
}

func (f fakeUsers) Users() []host.User {
	var us []host.User
	for id := range f {
		us = append(us, host.User{Entry: host.Entry{ID: id}})
	}
	return us
}

// serveSite mounts the handler at /ui as serve does, with users alice and
// bob (tokens "tok-alice", "tok-bob") and the admin key "admin-key".
func serveSite(t *testing.T) (*httptest.Server, fakeUsers) {
	users := fakeUsers{}
	for _, id := range []string{"alice", "bob"} {
		dir := newRepo(t)
		users[id] = startRuntime(t, dir, host.RuntimeConfig{})
	}
	srv, err := New(Config{Users: users, Prefix: "/ui", Logger: testLogger(), Verify: func(tok string) (Grant, bool) {
		switch tok {
		case "tok-alice":
			return Grant{User: "alice", Write: true}, true
		case "tok-bob":
			return Grant{User: "bob", Write: true}, true
		case "tok-alice-reviewer":
			return Grant{User: "alice", Review: true}, true
		case "admin-key":
			return Grant{Admin: true, Write: true, Review: true}, true
		}
		return Grant{}, false
	}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ui/", srv)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts, users
}

// login logs a new browser in through the login form.
func login(t *testing.T, ts *httptest.Server, token string) (*http.Client, int) {
	c := newClient()
	_, body := do(t, c, http.MethodGet, ts.URL+"/ui/login", nil)
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("login form without a CSRF token:\n%s", body)
	}
	code, _ := do(t, c, http.MethodPost, ts.URL+"/ui/login", url.Values{"csrf": {m[1]}, "token": {token}})
	return c, code
}

// TestServeUsersApart: under serve, alice's session reaches her pages and
// never bob's, neither to read nor to act; the admin key sees the list of
// users and both memories.
func TestServeUsersApart(t *testing.T) {
	ts, users := serveSite(t)
	if _, code := login(t, ts, "tok-nobody"); code != http.StatusUnauthorized {
		t.Fatalf("a wrong token logged in: %d", code)
	}
	alice, code := login(t, ts, "tok-alice")
	if code != http.StatusOK {
		t.Fatalf("alice's login: %d", code)
	}
	code, body := do(t, alice, http.MethodGet, ts.URL+"/ui/", nil)
	if code != http.StatusOK || !strings.Contains(body, `href="/ui/u/alice/log"`) {
		t.Fatalf("alice's first page: %d\n%s", code, body)
	}
	m := csrfRE.FindStringSubmatch(func() string {
		_, b := do(t, alice, http.MethodGet, ts.URL+"/ui/u/alice/m/user_memory/cats.md", nil)
		return b
	}())
	if m == nil {
		t.Fatal("no CSRF token on alice's page")
	}
	bobHead := gitT(t, users["bob"].Dir, "rev-parse", "HEAD")
	for _, p := range []string{"/ui/u/bob/", "/ui/u/bob/log", "/ui/u/bob/m/user.md", "/ui/u/bob/events", "/ui/u/carol/"} {
		if code, _ := do(t, alice, http.MethodGet, ts.URL+p, nil); code != http.StatusForbidden {
			t.Errorf("alice GET %s: %d, want 403", p, code)
		}
	}
	for _, p := range []string{"/ui/u/bob/retire", "/ui/u/bob/edit", "/ui/u/bob/revert", "/ui/u/bob/consolidate"} {
		if code, _ := do(t, alice, http.MethodPost, ts.URL+p, url.Values{"csrf": {m[1]}, "path": {"user_memory/cats.md"}, "text": {"x"}}); code != http.StatusForbidden {
			t.Errorf("alice POST %s: %d, want 403", p, code)
		}
	}
	if h := gitT(t, users["bob"].Dir, "rev-parse", "HEAD"); h != bobHead {
		t.Fatal("alice's session changed bob's memory")
	}
	// Her own action works and lands in her repository only.
	if code, _ := do(t, alice, http.MethodPost, ts.URL+"/ui/u/alice/retire", url.Values{"csrf": {m[1]}, "path": {"user_memory/cats.md"}}); code != http.StatusOK {
		t.Fatalf("alice retires her memory: %d", code)
	}
	if a := gitT(t, users["alice"].Dir, "log", "-1", "--format=%an"); a != "ui (alice)" {
		t.Fatalf("author %q, want ui (alice)", a)
	}
	// No session: the login page.
	if code, body := do(t, newClient(), http.MethodGet, ts.URL+"/ui/u/alice/", nil); code != http.StatusOK || !strings.Contains(body, `name="token"`) {
		t.Fatalf("no session: %d, want the login form", code)
	}
	admin, code := login(t, ts, "admin-key")
	if code != http.StatusOK {
		t.Fatalf("admin login: %d", code)
	}
	_, body = do(t, admin, http.MethodGet, ts.URL+"/ui/", nil)
	mustContain(t, body, `href="/ui/u/alice/"`, `href="/ui/u/bob/"`)
	if code, _ := do(t, admin, http.MethodGet, ts.URL+"/ui/u/bob/log", nil); code != http.StatusOK {
		t.Fatalf("admin opens bob's log: %d", code)
	}
}

// TestServeLoginCSRF: the login form refuses a post without its own
// token (login CSRF).
func TestServeLoginCSRF(t *testing.T) {
	ts, _ := serveSite(t)
	c := newClient()
	do(t, c, http.MethodGet, ts.URL+"/ui/login", nil)
	for _, tok := range []string{"", "forged"} {
		if code, _ := do(t, c, http.MethodPost, ts.URL+"/ui/login", url.Values{"csrf": {tok}, "token": {"tok-alice"}}); code != http.StatusForbidden {
			t.Errorf("login with csrf %q: %d, want 403", tok, code)
		}
	}
}
