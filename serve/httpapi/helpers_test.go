package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/template"
)

const adminKey = "admin-key-for-tests-0123456789"

// env is a serve ROOT with users alice and bob, the real host, the fake
// model behind a real provider and the fair pool, and the API on an
// httptest server.
type env struct {
	t     testing.TB
	root  string
	h     *host.Host
	model *llmtest.Server
	pool  *llm.Pool
	api   *Server
	srv   *httptest.Server
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(logOut, nil)) }

var logOut io.Writer = io.Discard

func newEnv(t *testing.T, provider string, mod func(*Config)) *env {
	t.Helper()
	return newEnvWith(t, t.TempDir(), provider, 0, mod)
}

// newEnvWith is newEnv in root, with n extra memories for alice.
func newEnvWith(t testing.TB, root, provider string, n int, mod func(*Config)) *env {
	t.Helper()
	for _, id := range []string{"alice", "bob"} {
		newUser(t, root, id, n)
	}
	model := llmtest.New(t)
	var p llm.Provider
	switch provider {
	case "openai":
		p = llm.NewOpenAI(model.OpenAIURL(), "sk-test-key-abcdefghijklmnop", "fake")
	case "anthropic":
		p = llm.NewAnthropic(model.AnthropicURL(), "sk-test-key-abcdefghijklmnop", "fake", 0)
	default:
		p = llm.NewOllama(model.OllamaURL(), "fake")
	}
	pool := llm.NewPool(p, llm.PoolConfig{Concurrency: 2})
	h, err := host.New(host.Config{
		Root:        root,
		Runtime:     host.RuntimeConfig{Consolidate: true, Idle: time.Hour, Every: 1 << 20, Debounce: 10 * time.Millisecond},
		ProviderFor: func(id string) llm.Provider { return pool.Background(id) },
		Logger:      quietLog(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	cfg := Config{Users: h, Pool: pool, AdminKey: adminKey, Tokens: OpenTokens(root), Logger: quietLog()}
	if mod != nil {
		mod(&cfg)
	}
	api := New(cfg)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &env{t: t, root: root, h: h, model: model, pool: pool, api: api, srv: srv}
}

// newUser makes ROOT/users/id a mindmount repository with one commit and
// registers it.
func newUser(t testing.TB, root, id string, n int) {
	t.Helper()
	dir := host.UserDir(root, id)
	if _, err := gitrepo.Init(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := template.Write(dir, strings.ToUpper(id[:1])+id[1:], false); err != nil {
		t.Fatal(err)
	}
	if id == "alice" && n > 0 {
		writeMemories(t, dir, n)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "init")
	if err := host.AddUser(root, host.Entry{ID: id, UID: testUID(root), GID: testUID(root)}); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		// The in-process Host serves as root: the tree stays root's, so
		// that the tests' own git reads it.
		filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
			if err == nil {
				os.Lchown(p, 0, 0)
			}
			return nil
		})
	}
}

// testUID is a uid for the next user of root: the registry refuses
// root's ids and shared ones, so as root each user gets one no account
// has; otherwise our own (a daemon that is not root serves one user).
func testUID(root string) uint32 {
	if os.Getuid() != 0 {
		return uint32(os.Getuid())
	}
	users, _ := host.ReadRegistry(root)
	next := uint32(3200)
	for _, u := range users {
		next = max(next, u.UID+1, u.GID+1)
	}
	return next
}

func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=test", "-c", "user.email=test@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// do sends a request with the given bearer ("" for none) and header
// pairs.
func (e *env) do(method, path, bearer, body string, header ...string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// status sends a request and returns its status and decoded JSON body.
func (e *env) status(method, path, bearer, body string, header ...string) (int, map[string]any) {
	e.t.Helper()
	resp := e.do(method, path, bearer, body, header...)
	defer resp.Body.Close()
	var v map[string]any
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		e.t.Fatalf("%s %s: content type %q: %s", method, path, ct, b)
	}
	json.Unmarshal(b, &v)
	return resp.StatusCode, v
}

// sse reads a chat stream event by event as the events arrive.
type sse struct {
	r *bufio.Reader
}

// next returns the data of the next event; "" at the end of the body.
func (s *sse) next(t *testing.T) string {
	t.Helper()
	var data []string
	for {
		l, err := s.r.ReadString('\n')
		l = strings.TrimRight(l, "\r\n")
		if l == "" && len(data) > 0 {
			return strings.Join(data, "\n")
		}
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			data = append(data, d)
		}
		if err != nil {
			return strings.Join(data, "\n")
		}
	}
}

// content is the delta content of a chunk event.
func content(t *testing.T, data string) string {
	t.Helper()
	var c struct {
		Choices []struct {
			Delta struct {
				Content string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(data), &c); err != nil || len(c.Choices) != 1 {
		t.Fatalf("not a chunk: %q (%v)", data, err)
	}
	return c.Choices[0].Delta.Content
}

// readFile reads a file of a user's repository.
func (e *env) readFile(id, rel string) string {
	b, err := os.ReadFile(filepath.Join(host.UserDir(e.root, id), filepath.FromSlash(rel)))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// transcripts lists the chat transcripts of a user.
func (e *env) transcripts(id string) []string {
	m, _ := filepath.Glob(filepath.Join(host.UserDir(e.root, id), filepath.FromSlash(TranscriptDir), "*.jsonl"))
	return m
}

func (e *env) userPath(id, rel string) string {
	return filepath.Join(host.UserDir(e.root, id), filepath.FromSlash(rel))
}

func runtimeGosched() { time.Sleep(time.Millisecond) }
