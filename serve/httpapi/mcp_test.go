package httpapi

import (
	"net/http"
	"testing"
	"time"
)

// TestMCPAuth: /mcp is behind the same auth; the handler learns the user
// from the token, or from X-Mindmount-User for the admin.
func TestMCPAuth(t *testing.T) {
	var seen string
	e := newEnv(t, "ollama", func(c *Config) {
		c.MCP = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = RequestUser(r)
			writeJSON(w, 200, map[string]string{"user": seen})
		})
	})
	tok, _, _ := NewToken(e.root, "alice", time.Now())
	if code, _ := e.status("POST", "/mcp", "", `{}`); code != 401 {
		t.Fatalf("no credentials: %d", code)
	}
	if code, _ := e.status("POST", "/mcp", tok, `{}`); code != 200 || seen != "alice" {
		t.Fatalf("token: %d %q", code, seen)
	}
	if code, _ := e.status("POST", "/mcp?userId=bob", tok, `{}`); code != 200 || seen != "alice" {
		t.Fatalf("a token always acts for its own user: %d %q", code, seen)
	}
	if code, _ := e.status("POST", "/mcp", adminKey, `{}`); code != 400 {
		t.Fatalf("admin without a user: %d", code)
	}
	req, _ := http.NewRequest("POST", e.srv.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	req.Header.Set("X-Mindmount-User", "bob")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 || seen != "bob" {
		t.Fatalf("admin for bob: %v %v %q", err, resp.StatusCode, seen)
	}
	resp.Body.Close()
}
