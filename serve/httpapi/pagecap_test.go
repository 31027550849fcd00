package httpapi

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestFrontCapsPages: the web page's requests count among their user's
// open requests, with the user's API calls: a user at the cap is
// answered 429 on the page and the API, while another user's page is
// still served, and the user is served again once a page ends.
func TestFrontCapsPages(t *testing.T) {
	root := t.TempDir()
	for _, id := range []string{"alice", "bob"} {
		newUser(t, root, id, 0)
	}
	alice, _, _ := NewToken(root, "alice", time.Now())
	bob, _, _ := NewToken(root, "bob", time.Now())
	f := newFront(t, root, "", "127.0.0.1:0", func(c *Config) { c.MaxPerUser = 2 })
	release := make(chan struct{})
	f.workers.mu.Lock()
	f.workers.block["alice"] = release
	f.workers.mu.Unlock()
	ca, code := f.login(alice)
	if code != http.StatusSeeOther {
		t.Fatalf("login: %d", code)
	}
	cb, _ := f.login(bob)
	// A deadline stops a page the cap failed to refuse.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	page := func(c *http.Client, path string) *http.Response {
		req, _ := http.NewRequestWithContext(ctx, "GET", f.base+path, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	var open []*http.Response
	for range 2 {
		resp := page(ca, "/ui/u/alice/events")
		if resp.StatusCode != 200 {
			t.Fatalf("page: %d", resp.StatusCode)
		}
		open = append(open, resp)
	}
	resp := page(ca, "/ui/u/alice/")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "open web page") {
		t.Fatalf("a third page of alice: %d %s", resp.StatusCode, b)
	}
	if code := f.call(http.DefaultClient, "GET", "/v1/recall?q=x", alice, ""); code != http.StatusTooManyRequests {
		t.Fatalf("alice's API call at her cap: %d, want 429", code)
	}
	if code := f.call(cb, "GET", "/ui/u/bob/", "", ""); code != 200 {
		t.Fatalf("bob's page while alice is at her cap: %d", code)
	}
	close(release)
	for _, r := range open {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	if code := f.call(ca, "GET", "/ui/u/alice/", "", ""); code != 200 {
		t.Fatalf("alice's page after hers ended: %d", code)
	}
	if code := f.call(http.DefaultClient, "GET", "/v1/recall?q=x", bob, ""); code != 200 {
		t.Fatalf("bob's API call: %d", code)
	}
}
