package mcpserver

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mindmount/mindmount/serve/host"
)

func memoryFile(title, desc, fact string) string {
	return "---\ndescription: " + desc + "\nstatus: active\n---\n# " + title + "\n\n## Fact\n" + fact + "\n\n## Access log\n"
}

func git(t testing.TB, dir string, args ...string) string {
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

// newRepo makes a mindmount repository with a read_only persona, a user
// profile and one memory of each kind, committed.
func newRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	files := map[string]string{
		"character.md":              "---\ndescription: The assistant's persona\nread_only: true\n---\n# Character\n\nYou are a careful assistant.\n",
		"user.md":                   "---\ndescription: Who the user is\n---\n# User\n\nThe user is Ada.\n",
		"user_memory/likes-tea.md":  memoryFile("Likes Tea", "Drinks green tea every morning", "You drink green tea every morning."),
		"character_memory/brief.md": memoryFile("Brief", "Answer briefly", "Keep answers short."),
		".gitignore":                ".mindmount/cache/\n",
	}
	for rel, data := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "seed")
	return dir
}

func testLogger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startRuntime opens and starts the runtime of dir; it is closed in
// t.Cleanup.
func startRuntime(t testing.TB, dir string) *host.Runtime {
	t.Helper()
	return startRuntimeDebounce(t, dir, 20*time.Millisecond)
}

func startRuntimeDebounce(t testing.TB, dir string, debounce time.Duration) *host.Runtime {
	t.Helper()
	rt, err := host.OpenRuntime(dir, host.RuntimeConfig{Debounce: debounce, MaxWait: 10 * debounce, Logger: testLogger()})
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

type client struct {
	t   *testing.T
	cs  *mcp.ClientSession
	dir string
	rt  *host.Runtime
}

// connect serves rt over an in-memory transport and returns a client
// session named "test-client".
func connect(t *testing.T, rt *host.Runtime, copts *mcp.ClientOptions) *client {
	t.Helper()
	ctx := context.Background()
	srv := New(rt, Options{Logger: testLogger(), Version: "test"})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1.0"}, copts)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return &client{t: t, cs: cs, dir: rt.Dir, rt: rt}
}

func setup(t *testing.T) *client {
	t.Helper()
	return connect(t, startRuntime(t, newRepo(t)), nil)
}

// call runs a tool and returns its text and whether it is a tool error. A
// protocol error fails the test: failures must be tool errors.
func (c *client) call(name string, args map[string]any) (string, bool) {
	c.t.Helper()
	res, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		c.t.Fatalf("%s: protocol error %v (want a tool result)", name, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

// ok runs a tool that must succeed.
func (c *client) ok(name string, args map[string]any) string {
	c.t.Helper()
	text, isErr := c.call(name, args)
	if isErr {
		c.t.Fatalf("%s %v: tool error: %s", name, args, text)
	}
	return text
}

// fails runs a tool that must fail with a text containing each of want.
func (c *client) fails(name string, args map[string]any, want ...string) string {
	c.t.Helper()
	text, isErr := c.call(name, args)
	if !isErr {
		c.t.Fatalf("%s %v succeeded, want a tool error: %s", name, args, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			c.t.Errorf("%s error %q lacks %q", name, text, w)
		}
	}
	return text
}

func (c *client) git(args ...string) string {
	c.t.Helper()
	return git(c.t, c.dir, args...)
}

func (c *client) head() string { return c.git("rev-parse", "HEAD") }

// committed returns the file at HEAD, "" when absent.
func (c *client) committed(rel string) string {
	c.t.Helper()
	cmd := exec.Command("git", "show", "HEAD:"+rel)
	cmd.Dir = c.dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func (c *client) disk(rel string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(c.dir, filepath.FromSlash(rel)))
	return string(b), err == nil
}
