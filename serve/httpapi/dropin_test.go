package httpapi

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
)

// TestMissingUserID: a request naming no user is refused (400) with the
// reason and the way to the reference's behaviour when the server adds no
// users itself, on each door a userId reaches (body, query); with
// --auto-users (Provision) it is the reference's anonymous user.
func TestMissingUserID(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/chat", `{"message":"hi"}`},
		{"POST", "/v1/chat", `{"userId":null,"message":"hi"}`},
		{"POST", "/v1/bye", `{}`},
		{"POST", "/v1/consolidate", `{"transcript":[]}`},
	} {
		code, v := e.status(c.method, c.path, adminKey, c.body)
		msg, _ := v["error"].(string)
		if code != 400 || !strings.Contains(msg, "userId is missing") || !strings.Contains(msg, "--auto-users") {
			t.Errorf("%s %s %s: %d %q, want 400 naming the missing userId and --auto-users", c.method, c.path, c.body, code, msg)
		}
	}
	var provisioned []string
	var auto *env
	auto = newEnv(t, "ollama", func(c *Config) {
		c.Provision = func(ctx context.Context, id string) error {
			provisioned = append(provisioned, id)
			newUser(t, auto.root, id, 0)
			return auto.h.Reload()
		}
	})
	if code, v := auto.status("POST", "/v1/consolidate", adminKey, `{"transcript":[]}`); code != 200 || v["status"] != "empty" {
		t.Fatalf("auto-users, no userId: %d %v", code, v)
	}
	if strings.Join(provisioned, " ") != anonymous {
		t.Fatalf("provisioned %v, want the anonymous user", provisioned)
	}
}

// TestMaxBody: the body limit is Config.MaxBody (serve --max-body): a
// 2 MiB chat is refused by default, naming the flag, and answered with a
// larger limit.
func TestMaxBody(t *testing.T) {
	body := `{"userId":"alice","message":"` + strings.Repeat("a ", 1<<20) + `"}`
	code, v := newEnv(t, "ollama", nil).status("POST", "/v1/chat", adminKey, body)
	if msg, _ := v["error"].(string); code != 413 || !strings.Contains(msg, "--max-body") {
		t.Fatalf("2 MiB by default: %d %q, want 413 naming --max-body", code, msg)
	}
	big := newEnv(t, "ollama", func(c *Config) { c.MaxBody = 4 << 20 })
	resp := big.do("POST", "/v1/chat", adminKey, body)
	if got := readAll(resp); resp.StatusCode != 200 || !strings.HasSuffix(got, "data: [DONE]\n\n") {
		t.Fatalf("2 MiB under a 4 MiB limit: %d %.200s, want an answer", resp.StatusCode, got)
	}
}

// TestHealthNotReadyBeforeUsersLoad: while the daemon's users are not
// loaded (Config.Ready false), /health is 503 "starting", so a client that
// waits for 200 never sends a request that would wait for a load; then 200.
func TestHealthNotReadyBeforeUsersLoad(t *testing.T) {
	var ready atomic.Bool
	e := newEnv(t, "ollama", func(c *Config) { c.Ready = ready.Load })
	if code, v := e.status("GET", "/health", "", ""); code != 503 || v["status"] != "starting" {
		t.Fatalf("before the users are loaded: %d %v, want 503 starting", code, v)
	}
	ready.Store(true)
	if code, v := e.status("GET", "/health", "", ""); code != 200 || v["status"] != "ok" {
		t.Fatalf("once loaded: %d %v, want 200 ok", code, v)
	}
}
