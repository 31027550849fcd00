package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/host"
)

// TestAuth: the admin key acts for anyone, a user token for its user only
// (403 elsewhere), anything else is 401; health needs nothing; tokens are
// stored hashed, 0600, outside the repositories.
func TestAuth(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	tok, _, err := NewToken(e.root, "alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	recall := "/v1/recall?userId=alice&q=tea"
	cases := []struct {
		name, bearer, path string
		want               int
	}{
		{"no credentials", "", recall, 401},
		{"wrong key", "nope-" + adminKey, recall, 401},
		{"admin", adminKey, recall, 200},
		{"alice's token for alice", tok, recall, 200},
		{"alice's token for bob", tok, "/v1/recall?userId=bob&q=tea", 403},
		{"a token for no user", "mindmount_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", recall, 401},
		{"health without credentials", "", "/health", 200},
		{"unknown user", adminKey, "/v1/recall?userId=carol&q=tea", 404},
		{"bad user id", adminKey, "/v1/recall?userId=Alice/..&q=tea", 400},
		{"git", adminKey, "/v1/git/status", 501},
		{"no such endpoint", adminKey, "/v2/whatever", 404},
	}
	for _, tc := range cases {
		code, body := e.status("GET", tc.path, tc.bearer, "")
		if code != tc.want {
			t.Errorf("%s: status %d, want %d (%v)", tc.name, code, tc.want, body)
		}
		if code >= 400 {
			if msg, _ := body["error"].(string); msg == "" || strings.Contains(msg, tok) || strings.Contains(msg, adminKey) {
				t.Errorf("%s: error body %v", tc.name, body)
			}
		}
	}
	// alice's token cannot chat, bye or consolidate as bob.
	for _, p := range []string{"/v1/chat", "/v1/bye", "/v1/consolidate"} {
		code, _ := e.status("POST", p, tok, `{"userId":"bob","message":"hi","transcript":[{"role":"user","content":"x"}]}`)
		if code != http.StatusForbidden {
			t.Errorf("%s as bob with alice's token: %d", p, code)
		}
	}
	// Stored hashed, 0600, outside the repositories.
	fi, err := os.Stat(filepath.Join(e.root, TokensFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v %v", fi, err)
	}
	b, _ := os.ReadFile(filepath.Join(e.root, TokensFile))
	if strings.Contains(string(b), tok) || !strings.Contains(string(b), hashToken(tok)) {
		t.Fatal("the token file must hold the hash only")
	}
	// A second token works beside the first; revoking one leaves the other.
	tok2, id2, _ := NewToken(e.root, "alice", time.Now())
	if code, _ := e.status("GET", recall, tok2, ""); code != 200 {
		t.Fatalf("new token: %d", code)
	}
	list, _ := ListTokens(e.root, "alice")
	if len(list) != 2 {
		t.Fatalf("list: %+v", list)
	}
	if n, err := RevokeTokens(e.root, "alice", id2); n != 1 || err != nil {
		t.Fatalf("revoke %s: %d %v", id2, n, err)
	}
	if code, _ := e.status("GET", recall, tok2, ""); code != 401 {
		t.Fatalf("revoked token still works: %d", code)
	}
	if code, _ := e.status("GET", recall, tok, ""); code != 200 {
		t.Fatalf("the other token: %d", code)
	}
	if _, err := RevokeTokens(e.root, "alice", id2); !errors.Is(err, ErrNoToken) {
		t.Fatalf("revoking a revoked token: %v", err)
	}
}

// TestOpenWithoutKeys: with no admin key and no tokens, requests need no
// credentials (the daemon then listens on loopback only).
func TestOpenWithoutKeys(t *testing.T) {
	e := newEnv(t, "ollama", func(c *Config) { c.AdminKey = "" })
	if code, _ := e.status("GET", "/v1/recall?userId=alice&q=tea", "", ""); code != 200 {
		t.Fatalf("open server: %d", code)
	}
	// A client that always sends its Bearer header (the reference's do)
	// is not refused by a server that requires none.
	if code, _ := e.status("GET", "/v1/recall?userId=alice&q=tea", "stray-key-the-server-never-set", ""); code != 200 {
		t.Fatalf("open server, stray Bearer: %d", code)
	}
	NewToken(e.root, "alice", time.Now())
	if code, _ := e.status("GET", "/v1/recall?userId=alice&q=tea", "", ""); code != 401 {
		t.Fatalf("a token exists, so credentials are required: %d", code)
	}
	if code, _ := e.status("GET", "/v1/recall?userId=alice&q=tea", "stray-key-the-server-never-set", ""); code != 401 {
		t.Fatalf("a token exists, so a wrong Bearer is refused: %d", code)
	}
	// Revoking every token does not open the server again.
	RevokeTokens(e.root, "alice", "")
	if code, _ := e.status("GET", "/v1/recall?userId=alice&q=tea", "", ""); code != 401 {
		t.Fatalf("every token revoked, and the server is open again: %d", code)
	}
}

// TestAuthFailsClosed (issue 23, item 1): a server listening beyond
// loopback requires credentials from its first request, with no key and
// no token, and after the last token is revoked it still refuses everyone
// (health aside); an identity header never stands in for credentials.
func TestAuthFailsClosed(t *testing.T) {
	e := newEnv(t, "ollama", func(c *Config) { c.AdminKey = "" })
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.api.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	base := "http://127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	get := func(path, bearer string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("X-Mindmount-User", "alice")
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	recall := "/v1/recall?userId=alice&q=tea"
	if code := get(recall, ""); code != 401 {
		t.Fatalf("no key, no token, listening on 0.0.0.0: %d, want 401", code)
	}
	if code := get("/v1/git/status?userId=alice", ""); code != 401 {
		t.Fatalf("git status without credentials: %d", code)
	}
	if code := get("/health", ""); code != 200 {
		t.Fatalf("health: %d", code)
	}
	tok, _, _ := NewToken(e.root, "alice", time.Now())
	if code := get(recall, tok); code != 200 {
		t.Fatalf("with a token: %d", code)
	}
	RevokeTokens(e.root, "alice", "")
	for _, bearer := range []string{"", tok} {
		if code := get(recall, bearer); code != 401 {
			t.Fatalf("last token revoked (bearer %t): %d, want 401", bearer != "", code)
		}
	}
}

// TestTokenOutlivesNoUser (issue 23, item 2): removing a user and adding
// one with the same ID voids the old user's tokens, even when the token
// file still lists them (no one cleaned it up).
func TestTokenOutlivesNoUser(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	tok, _, err := NewToken(e.root, "alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	recall := "/v1/recall?userId=alice&q=tea"
	if code, _ := e.status("GET", recall, tok, ""); code != 200 {
		t.Fatalf("token: %d", code)
	}
	if err := host.RemoveUser(e.root, "alice"); err != nil {
		t.Fatal(err)
	}
	if code, _ := e.status("GET", recall, tok, ""); code != 401 {
		t.Fatalf("removed user's token: %d, want 401", code)
	}
	if err := host.AddUser(e.root, host.Entry{ID: "alice", UID: testUID(e.root), GID: testUID(e.root)}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{recall, "/v1/git/status?userId=alice"} {
		if code, _ := e.status("GET", p, tok, ""); code != 401 {
			t.Fatalf("%s with the old alice's token for the new alice: %d, want 401", p, code)
		}
	}
	if code, _ := e.status("POST", "/v1/consolidate", tok, `{"userId":"alice","transcript":[{"role":"user","content":"x"}]}`); code != 401 {
		t.Fatalf("consolidate with the old alice's token: %d, want 401", code)
	}
	list, _ := ListTokens(e.root, "alice")
	if len(list) != 1 || !list[0].Void {
		t.Fatalf("list: %+v", list)
	}
	tok2, _, _ := NewToken(e.root, "alice", time.Now())
	if code, _ := e.status("GET", recall, tok2, ""); code != 200 {
		t.Fatalf("a token for the new alice: %d", code)
	}
}

// TestTokenFileUnreadable: a token file that is not JSON accepts no token
// (fail closed), and the server stays closed.
func TestTokenFileUnreadable(t *testing.T) {
	e := newEnv(t, "ollama", func(c *Config) { c.AdminKey = "" })
	tok, _, _ := NewToken(e.root, "alice", time.Now())
	recall := "/v1/recall?userId=alice&q=tea"
	if code, _ := e.status("GET", recall, tok, ""); code != 200 {
		t.Fatalf("token: %d", code)
	}
	if err := os.WriteFile(filepath.Join(e.root, TokensFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bearer := range []string{"", tok} {
		if code, _ := e.status("GET", recall, bearer, ""); code != 401 {
			t.Fatalf("broken token file (bearer %t): %d, want 401", bearer != "", code)
		}
	}
}

func TestBadRequests(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	big := `{"userId":"alice","message":"` + strings.Repeat("a", 1<<20) + `"}` // the 1 MiB limit, by value
	cases := []struct {
		name, path, body string
		want             int
	}{
		{"malformed JSON", "/v1/chat", `{"userId":`, 400},
		{"empty message", "/v1/chat", `{"userId":"alice","message":"  "}`, 400},
		{"bad user id", "/v1/chat", `{"userId":"../bob","message":"hi"}`, 400},
		{"unknown user", "/v1/chat", `{"userId":"carol","message":"hi"}`, 404},
		{"too large", "/v1/chat", big, 413},
		{"control characters in session", "/v1/chat", `{"userId":"alice","message":"hi","sessionId":"a\u0000b"}`, 400},
		{"content neither text nor blocks", "/v1/consolidate", `{"userId":"alice","transcript":[{"role":"user","content":42}]}`, 400},
		{"userId neither string nor number", "/v1/bye", `{"userId":{"id":"alice"}}`, 400},
		{"consolidate unknown user", "/v1/consolidate", `{"userId":"carol","transcript":[{"role":"user","content":"x"}]}`, 404},
		{"bye unknown user", "/v1/bye", `{"userId":"carol"}`, 404},
	}
	for _, tc := range cases {
		if code, body := e.status("POST", tc.path, adminKey, tc.body); code != tc.want {
			t.Errorf("%s: %d, want %d (%v)", tc.name, code, tc.want, body)
		}
	}
	if code, _ := e.status("GET", "/v1/recall?userId=alice&q=tea&k=0", adminKey, ""); code != 400 {
		t.Errorf("k=0: %d", code)
	}
	resp := e.do("GET", "/v1/chat", adminKey, "")
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET chat: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	resp = e.do("POST", "/v1/recall", adminKey, "")
	resp.Body.Close()
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET" {
		t.Errorf("POST recall: %d, Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	if code, _ := e.status("GET", "/v1/nothing", adminKey, ""); code != 404 {
		t.Errorf("unknown endpoint: %d", code)
	}
}

// TestTokenScopes: a token does what its scope says. The default (read,
// write: an agent's) cannot approve or reject a dream — 403 saying a
// review token or the admin key can — however the path is spelled; a
// review token can; a read token cannot write; a token file written
// before scopes existed is read and write.
func TestTokenScopes(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	agent, _, _ := NewToken(e.root, "alice", time.Now())
	reviewer, _, err := NewScopedToken(e.root, "alice", ScopeReview, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	reader, _, _ := NewScopedToken(e.root, "alice", ScopeRead, time.Now())
	approve := `{"userId":"alice"}`
	for _, p := range []string{"/v1/review/1/approve", "/v1/review/1/reject", "/v1/review/%31/approve", "/v1/review/1/%61pprove"} {
		code, body := e.status("POST", p, agent, approve)
		if msg, _ := body["error"].(string); code != 403 || !strings.Contains(msg, "review scope") {
			t.Errorf("%s with the agent's token: %d %v", p, code, body)
		}
	}
	if code, _ := e.status("GET", "/v1/review?userId=alice", agent, ""); code != 200 {
		t.Errorf("the agent reads the review queue: %d", code)
	}
	for _, cred := range []string{reviewer, adminKey} {
		// No dream 1 waits: 404 shows the request got past the scope.
		withTip := `{"userId":"alice","tip":"0123456789abcdef0123456789abcdef01234567"}`
		if code, body := e.status("POST", "/v1/review/1/approve", cred, withTip); code != 404 {
			t.Errorf("approve with review scope: %d %v", code, body)
		}
	}
	if code, _ := e.status("GET", "/v1/review?userId=alice", reviewer, ""); code != 200 {
		t.Errorf("review brings read: %d", code)
	}
	if code, _ := e.status("POST", "/v1/bye", reviewer, `{"userId":"alice"}`); code != 403 {
		t.Errorf("a review token writes: %d", code)
	}
	if code, _ := e.status("GET", "/v1/recall?userId=alice&q=tea", reader, ""); code != 200 {
		t.Errorf("read token reads: %d", code)
	}
	for _, p := range []string{"/v1/bye", "/v1/chat", "/v1/consolidate", "/v1/review/1/approve"} {
		if code, _ := e.status("POST", p, reader, `{"userId":"alice","message":"hi"}`); code != 403 {
			t.Errorf("%s with a read token: %d", p, code)
		}
	}
	// A token file from before scopes: entries without "scopes".
	path := filepath.Join(e.root, TokensFile)
	b, _ := os.ReadFile(path)
	var f map[string][]map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for _, e := range f["tokens"] {
		delete(e, "scopes")
	}
	b, _ = json.Marshal(f)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _ := e.status("POST", "/v1/bye", reader, `{"userId":"alice"}`); code != 200 {
		t.Errorf("an old token writes: %d", code)
	}
	if code, _ := e.status("POST", "/v1/review/1/approve", reviewer, approve); code != 403 {
		t.Errorf("an old token approves: %d", code)
	}
	list, _ := ListTokens(e.root, "alice")
	for _, tk := range list {
		if tk.Scope != DefaultScope {
			t.Errorf("old token listed with scope %s", tk.Scope)
		}
	}
	if _, err := ParseScope("read,admin"); err == nil {
		t.Error("an unknown scope parsed")
	}
	if s, _ := ParseScope("review"); s != ScopeRead|ScopeReview {
		t.Errorf("review = %s", s)
	}
}
