package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/httpapi"
)

// TestHTTPHandler serves two users' repositories over streamable HTTP
// behind a resolver that plays the part of the HTTP API's auth: each
// client reaches its own memory only, and every runtime acquired for a
// request is released.
func TestHTTPHandler(t *testing.T) {
	rts := map[string]*host.Runtime{"ada": startRuntime(t, newRepo(t)), "bob": startRuntime(t, newRepo(t))}
	var mu sync.Mutex
	held := 0
	resolve := func(r *http.Request) (*host.Runtime, func(), error) {
		user := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		rt, ok := rts[user]
		if !ok {
			return nil, nil, fmt.Errorf("%w %q", host.ErrUnknownUser, user)
		}
		mu.Lock()
		held++
		mu.Unlock()
		return rt, func() {
			mu.Lock()
			held--
			mu.Unlock()
		}, nil
	}
	ts := httptest.NewServer(NewHandler(resolve, Options{Logger: testLogger()}))
	defer ts.Close()

	session := func(user string) *mcp.ClientSession {
		hc := &http.Client{Transport: bearer{user, http.DefaultTransport}}
		cl := mcp.NewClient(&mcp.Implementation{Name: "http-" + user, Version: "1"}, nil)
		cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("connect as %s: %v", user, err)
		}
		return cs
	}
	ada, bob := session("ada"), session("bob")
	res, err := ada.CallTool(context.Background(), &mcp.CallToolParams{Name: "create", Arguments: map[string]any{"path": "user_memory/likes-coffee.md", "file_text": coffee}})
	if err != nil || res.IsError {
		t.Fatalf("create as ada: %v %v", err, res)
	}
	res, err = bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": "user_memory/likes-coffee.md"}})
	if err != nil || !res.IsError {
		t.Errorf("bob sees ada's memory: %v %v", err, res)
	}
	if a := git(t, rts["ada"].Dir, "log", "-1", "--format=%an"); a != "mcp (http-ada)" {
		t.Errorf("author %q", a)
	}
	ada.Close()
	bob.Close()

	// An unknown user never reaches a server.
	cl := mcp.NewClient(&mcp.Implementation{Name: "eve", Version: "1"}, nil)
	hc := &http.Client{Transport: bearer{"eve", http.DefaultTransport}}
	if _, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc, MaxRetries: -1}, nil); err == nil {
		t.Error("eve connected")
	}
	if ErrorStatus(fmt.Errorf("x: %w", host.ErrUnknownUser)) != http.StatusNotFound || ErrorStatus(errors.New("no")) != http.StatusForbidden {
		t.Error("ErrorStatus")
	}
	ts.CloseClientConnections()
	ts.Close()
	mu.Lock()
	defer mu.Unlock()
	if held != 0 {
		t.Errorf("%d runtimes still held after every request ended", held)
	}
}

type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}

// scoped sets the scope header serve's front sets from a token.
type scoped struct {
	scope string
	rt    http.RoundTripper
}

func (s scoped) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(httpapi.ScopeHeader, s.scope)
	return s.rt.RoundTrip(r)
}

// TestReadOnlyScope: a caller whose token may only read (the front's
// scope header) reads but every writing tool is refused with a message
// saying why, and nothing is committed; read and write may write.
func TestReadOnlyScope(t *testing.T) {
	rt := startRuntime(t, newRepo(t))
	ts := httptest.NewServer(NewHandler(func(*http.Request) (*host.Runtime, func(), error) { return rt, func() {}, nil }, Options{Logger: testLogger()}))
	t.Cleanup(ts.Close) // after the sessions' own cleanups
	connect := func(scope string) *mcp.ClientSession {
		cl := mcp.NewClient(&mcp.Implementation{Name: "scoped", Version: "1"}, nil)
		cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: &http.Client{Transport: scoped{scope, http.DefaultTransport}}, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	head := git(t, rt.Dir, "rev-parse", "HEAD")
	ro := connect("read")
	if res, err := ro.CallTool(context.Background(), &mcp.CallToolParams{Name: "view", Arguments: map[string]any{"path": "user_memory/likes-tea.md"}}); err != nil || res.IsError {
		t.Fatalf("view with read: %v %v", err, res)
	}
	for _, call := range []*mcp.CallToolParams{
		{Name: "create", Arguments: map[string]any{"path": "user_memory/likes-coffee.md", "file_text": coffee}},
		{Name: "str_replace", Arguments: map[string]any{"path": "user_memory/likes-tea.md", "old_str": "green", "new_str": "black"}},
		{Name: "delete", Arguments: map[string]any{"path": "user_memory/likes-tea.md"}},
		{Name: "use", Arguments: map[string]any{"path": "user_memory/likes-tea.md"}},
	} {
		res, err := ro.CallTool(context.Background(), call)
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "may only read") {
			t.Errorf("%s with read: %v %+v", call.Name, err, res)
		}
	}
	if h := git(t, rt.Dir, "rev-parse", "HEAD"); h != head {
		t.Fatal("a read-only caller committed")
	}
	rw := connect("read,write")
	if res, err := rw.CallTool(context.Background(), &mcp.CallToolParams{Name: "create", Arguments: map[string]any{"path": "user_memory/likes-coffee.md", "file_text": coffee}}); err != nil || res.IsError {
		t.Fatalf("create with read,write: %v %v", err, res)
	}
}

// TestSessionCap: one repository keeps at most MaxSessions MCP sessions;
// one more is refused with 429 and a message saying how to get room,
// another repository is still served, and once a session ends a new
// one starts. A session's start is bounded in size (a 20 KB clientInfo
// name is refused), so what each session keeps of its client is small.
func TestSessionCap(t *testing.T) {
	rts := map[string]*host.Runtime{"ada": startRuntime(t, newRepo(t)), "bob": startRuntime(t, newRepo(t))}
	resolve := func(r *http.Request) (*host.Runtime, func(), error) {
		return rts[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")], func() {}, nil
	}
	ts := httptest.NewServer(NewHandler(resolve, Options{Logger: testLogger(), MaxSessions: 3}))
	t.Cleanup(ts.Close)
	connect := func(user, name string) (*mcp.ClientSession, error) {
		cl := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
		hc := &http.Client{Transport: bearer{user, http.DefaultTransport}}
		cs, err := cl.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc, MaxRetries: -1}, nil)
		if err == nil {
			t.Cleanup(func() { cs.Close() })
		}
		return cs, err
	}
	var open []*mcp.ClientSession
	for i := range 3 {
		cs, err := connect("ada", fmt.Sprint("c", i))
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		open = append(open, cs)
	}
	if _, err := connect("ada", "one-too-many"); err == nil {
		t.Fatal("a fourth session started")
	}
	// The refusal as a client sees it.
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(init))
	req.Header.Set("Authorization", "Bearer ada")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "MCP sessions open") {
		t.Fatalf("fourth session: %d %s", resp.StatusCode, b)
	}
	if _, err := connect("bob", "bob"); err != nil {
		t.Fatalf("another user is refused: %v", err)
	}
	open[0].Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := connect("ada", "after-close"); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no room after a session ended: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	big := strings.Replace(init, `"name":"x"`, `"name":"`+strings.Repeat("n", 20<<10)+`"`, 1)
	req, _ = http.NewRequest("POST", ts.URL, strings.NewReader(big))
	req.Header.Set("Authorization", "Bearer bob")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("a session with a 20 KB client name: %d %.200s", resp.StatusCode, b)
	}
}
