package httpapi

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAuth: the admin key acts for anyone, a user token for its user only
// (403 elsewhere), anything else is 401; health needs nothing; tokens are
// stored hashed, 0600, outside the repositories.
func TestAuth(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	tok, err := NewToken(e.root, "alice", time.Now())
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
	// A new token replaces the old one.
	tok2, _ := NewToken(e.root, "alice", time.Now())
	if code, _ := e.status("GET", recall, tok, ""); code != 401 {
		t.Fatalf("rotated token still works: %d", code)
	}
	if code, _ := e.status("GET", recall, tok2, ""); code != 200 {
		t.Fatalf("new token: %d", code)
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
