package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/serve/host"
)

// refClient is a client written against the reference server's documented
// API (viral-git-agent-memory's README and api_server.py), as a Python
// client of it reads answers: dict lookups that fail on a missing key. It
// always sends its Bearer header, as clients configured for an API_KEY do.
type refClient struct {
	t      *testing.T
	base   string
	bearer string
}

func (c refClient) post(path string, body any) *http.Response {
	c.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.base+path, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func (c refClient) get(path string) map[string]any {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+c.bearer)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.json(resp)
}

func (c refClient) json(resp *http.Response) map[string]any {
	c.t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if resp.StatusCode != 200 || json.Unmarshal(b, &v) != nil {
		c.t.Fatalf("%s: %d %s", resp.Request.URL.Path, resp.StatusCode, b)
	}
	return v
}

// key is Python's d[k]: a missing key fails the client.
func key(t *testing.T, v any, k string) any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("not an object: %v", v)
	}
	x, ok := m[k]
	if !ok {
		t.Fatalf("KeyError %q in %v", k, m)
	}
	return x
}

// chat streams one message and returns the answer, reading every data
// line as the reference's clients do: [DONE] ends, {"error"} raises, and
// otherwise chunk["choices"][0]["delta"]["content"].
func (c refClient) chat(userID any, message string) (string, error) {
	c.t.Helper()
	resp := c.post("/v1/chat", map[string]any{"userId": userID, "message": message})
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		c.t.Fatalf("chat: %d %s", resp.StatusCode, b)
	}
	var answer strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if d == "[DONE]" {
			return answer.String(), nil
		}
		var chunk map[string]any
		if err := json.Unmarshal([]byte(d), &chunk); err != nil {
			c.t.Fatalf("chunk %q: %v", d, err)
		}
		if e, ok := chunk["error"]; ok {
			return answer.String(), fmt.Errorf("%v", e)
		}
		choice := key(c.t, chunk, "choices").([]any)[0]
		answer.WriteString(key(c.t, key(c.t, choice, "delta"), "content").(string))
	}
	c.t.Fatal("the stream ended without [DONE]")
	return "", nil
}

// TestReferenceClient: a client of the reference server, unchanged,
// against the built mindmount serve --http: it sends a stray Bearer to a
// server that needs no credentials, a user ID the registry does not know
// ("Alice", and a number), reads the stream with delta["content"] on every
// chunk, gets bye's and consolidate's answers at once, the reference's
// git status fields, and the error event when the model fails.
func TestReferenceClient(t *testing.T) {
	root := t.TempDir()
	reachable(root)
	os.Chmod(root, 0o755)
	first := 30000
	if os.Getuid() != 0 {
		first = os.Getuid() // without root, the range can only be our own uid
	}
	model := llmtest.New(t)
	env := []string{"MINDMOUNT_LLM=ollama", "OLLAMA_HOST=" + model.OllamaURL(), "MINDMOUNT_MODEL=fake", "MINDMOUNT_API_KEY="}
	cmd, logs, base := startServeHTTP(t, root, env, "--auto-users", fmt.Sprintf("%d-%d", first, first+9), "--cors", "http://localhost:3000")
	c := refClient{t: t, base: base, bearer: "sk-left-over-from-the-reference"}

	if h := c.get("/health"); key(t, h, "status") != "ok" || key(t, h, "version") == "" {
		t.Fatalf("health %v", h)
	}
	model.Queue(llmtest.KindOther, llmtest.Reply{Content: "Hello Alice, what do you design?"})
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs)
		}
	})
	if got, err := c.chat("Alice", "Hi, I design typefaces"); err != nil || got != "Hello Alice, what do you design?" {
		t.Fatalf("chat: %q %v\n%s", got, err, logs)
	}
	// A model that fails before its first token: the error event.
	model.Queue(llmtest.KindOther, llmtest.Reply{Status: 500, Error: "boom"})
	if _, err := c.chat("Alice", "still there?"); err == nil {
		t.Fatal("a failed model call did not raise the stream's error")
	}
	id := host.IDFor("Alice")
	users, _ := host.ReadRegistry(root)
	if len(users) != 1 || users[0].ID != id || users[0].UID != uint32(first) {
		t.Fatalf("registry after Alice's first chat: %+v, want %s with uid %d", users, id, first)
	}

	// bye answers before the model does; the consolidation runs on.
	hold := make(chan struct{})
	model.Queue(llmtest.KindExtract, llmtest.Reply{Hold: hold, Content: llmtest.JSON(map[string]any{"facts": []any{map[string]any{
		"kind": "user", "slug": "designs-typefaces", "description": "Designs typefaces", "fact": "You design typefaces.", "episode": ""}}})})
	model.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
	if v := c.json(c.post("/v1/bye", map[string]any{"userId": "Alice"})); key(t, v, "status") != "bye" {
		t.Fatalf("bye %v", v)
	}
	close(hold)
	mem := filepath.Join(host.UserDir(root, id), "user_memory", "designs-typefaces.md")
	waitFile(t, mem, logs)

	// consolidate with a transcript, as the reference's README shows it.
	model.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []any{map[string]any{
		"kind": "user", "slug": "has-a-dog", "description": "Has a dog named Pixel", "fact": "You have a dog named Pixel.", "episode": ""}}})})
	model.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
	v := c.json(c.post("/v1/consolidate", map[string]any{"userId": 7, "transcript": []any{
		map[string]any{"role": "user", "content": "My dog is called Pixel"},
		map[string]any{"role": "assistant", "content": "Pixel is a great name."}}}))
	if key(t, v, "status") != "consolidating" || key(t, v, "user_id") != "7" || key(t, v, "messages") != 2.0 {
		t.Fatalf("consolidate %v", v)
	}
	waitFile(t, filepath.Join(host.UserDir(root, "7"), "user_memory", "has-a-dog.md"), logs)
	if v := c.json(c.post("/v1/consolidate", map[string]any{"userId": "Alice", "transcript": []any{}})); key(t, v, "status") != "empty" {
		t.Fatalf("empty consolidate %v", v)
	}

	// git status: the reference's fields (not connected yet).
	st := c.get("/v1/git/status?userId=Alice")
	if key(t, st, "userId") != "Alice" && key(t, st, "userId") != id {
		t.Fatalf("git status %v", st)
	}
	if key(t, st, "connected") != false {
		t.Fatalf("git status %v", st)
	}
	for _, k := range []string{"github_username", "repo_name", "repo_url", "configured_at", "last_push"} {
		key(t, st, k)
	}
	stopMindmount(t, cmd, logs)
}

// waitFile waits for a file a background run writes.
func waitFile(t *testing.T, path string, logs *logBuffer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared\n%s", path, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
