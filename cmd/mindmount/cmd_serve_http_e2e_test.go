package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/serve/httpapi"
)

// startServeHTTP runs the built binary's mindmount serve --root ROOT --http
// 127.0.0.1:0 (no mount: no FUSE needed) and returns the API's base URL,
// read from the readiness line.
func startServeHTTP(t *testing.T, root string, env []string, extra ...string) (*exec.Cmd, *logBuffer, string) {
	t.Helper()
	cmd, logs, line := startFirstLine(t, env, append([]string{"serve", "--root", root, "--http", "127.0.0.1:0"}, extra...)...)
	prefix := "mindmount: serving " + root + ", http on "
	addr, ok := strings.CutPrefix(line, prefix)
	if !ok || !strings.HasPrefix(addr, "127.0.0.1:") || strings.HasSuffix(addr, ":0") {
		t.Fatalf("readiness line %q, want %q + the bound address\n%s", line, prefix, logs)
	}
	return cmd, logs, "http://" + addr
}

// TestServeHTTPEndToEnd: the built daemon, no mount, a user token; a
// streamed conversation read chunk by chunk, bye, and the new memory is
// what mindmount recall finds.
func TestServeHTTPEndToEnd(t *testing.T) {
	root := t.TempDir()
	reachable(root)
	runCmd(t, append([]string{"users", "add", root, "alice", "--name", "Alice"}, ownUID(aliceUID)...)...)
	runCmd(t, append([]string{"users", "add", root, "bob"}, ownUID(bobUID)...)...)
	tok := strings.TrimSpace(runCmd(t, "users", "token", root, "alice"))
	if !strings.HasPrefix(tok, "mindmount_") {
		t.Fatalf("token %q", tok)
	}
	model := llmtest.New(t)
	env := []string{"MINDMOUNT_LLM=ollama", "OLLAMA_HOST=" + model.OllamaURL(), "MINDMOUNT_MODEL=fake", "MINDMOUNT_API_KEY="}
	cmd, logs, base := startServeHTTP(t, root, env)

	post := func(path, bearer, body string) *http.Response {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+bearer)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	hold := make(chan struct{})
	answer := "Nice to meet you, Alice. Designing what, mostly?"
	model.Queue(llmtest.KindOther, llmtest.Reply{Content: answer, Hold: hold})
	resp := post("/v1/chat", tok, `{"userId":"alice","message":"Hi, I work as a designer of typefaces","sessionId":"e2e"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("chat %d\n%s", resp.StatusCode, logs)
	}
	br := bufio.NewReader(resp.Body)
	var got strings.Builder
	sawDone, chunks := false, 0
	for {
		l, err := br.ReadString('\n')
		if d, ok := strings.CutPrefix(strings.TrimSpace(l), "data: "); ok {
			if d == "[DONE]" {
				sawDone = true
			} else {
				var c struct {
					Choices []struct{ Delta struct{ Content string } }
				}
				json.Unmarshal([]byte(d), &c)
				if len(c.Choices) == 1 && c.Choices[0].Delta.Content != "" {
					chunks++
					got.WriteString(c.Choices[0].Delta.Content)
					if chunks == 1 {
						close(hold) // the first chunk arrived before the model finished
					}
				}
			}
		}
		if err != nil {
			break
		}
	}
	resp.Body.Close()
	if !sawDone || got.String() != answer || chunks < 2 {
		t.Fatalf("stream: done %v, %d chunks, %q", sawDone, chunks, got.String())
	}
	// alice's token is not bob's.
	if r := post("/v1/bye", tok, `{"userId":"bob"}`); r.StatusCode != 403 {
		t.Fatalf("bob with alice's token: %d", r.StatusCode)
	}
	model.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []any{map[string]any{
		"kind": "user", "slug": "designs-typefaces", "description": "Designs typefaces", "fact": "You work as a designer of typefaces.", "episode": ""}}})})
	model.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
	r := post("/v1/bye?wait=1", tok, `{"userId":"alice"}`)
	var res struct {
		Status string
		Added  int
	}
	json.NewDecoder(r.Body).Decode(&res)
	r.Body.Close()
	if r.StatusCode != 200 || res.Status != "ok" || res.Added != 1 {
		t.Fatalf("bye %d %+v\n%s", r.StatusCode, res, logs)
	}
	// The worker's model calls went through the daemon's one pool, which
	// the workers own and /health reports.
	hr, err := http.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var health struct {
		Model *struct {
			Provider, Model string
			LastCallOK      *bool
		}
	}
	json.NewDecoder(hr.Body).Decode(&health)
	hr.Body.Close()
	if m := health.Model; m == nil || m.Provider != "ollama" || m.Model != "fake" || m.LastCallOK == nil || !*m.LastCallOK {
		t.Fatalf("/health model: %+v", m)
	}
	stopMindmount(t, cmd, logs)
	var hits []httpapi.Hit
	json.Unmarshal([]byte(runCmd(t, "recall", root+"/users/alice", "typefaces designer", "--json")), &hits)
	if len(hits) == 0 || hits[0].Path != "user_memory/designs-typefaces.md" {
		t.Fatalf("recall: %+v", hits)
	}
	if strings.Contains(logs.String(), tok) || strings.Contains(logs.String(), "designer of typefaces") {
		t.Fatalf("the log holds a token or transcript text:\n%s", logs)
	}
}

// TestServeHTTPRefusesOpenListen: without a key or tokens, a non-loopback
// address is refused unless --insecure-listen.
func TestServeHTTPRefusesOpenListen(t *testing.T) {
	root := t.TempDir()
	runCmd(t, "users", "add", root, "alice")
	cmd := exec.Command(mindmountBinary(t), "serve", "--root", root, "--http", "0.0.0.0:0")
	cmd.Env = append(os.Environ(), "MINDMOUNT_API_KEY=", "MINDMOUNT_LLM=ollama", "OLLAMA_HOST=127.0.0.1:9")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--insecure-listen") {
		t.Fatalf("open listen accepted: %v\n%s", err, out)
	}
}

// TestServeHTTPWarmsUsers: serve --http loads the registered users in the
// background when it starts, so the first chat does not pay for loading
// one: /health counts them loaded before any request named them.
func TestServeHTTPWarmsUsers(t *testing.T) {
	root := t.TempDir()
	reachable(root)
	runCmd(t, append([]string{"users", "add", root, "alice"}, ownUID(aliceUID)...)...)
	runCmd(t, append([]string{"users", "add", root, "bob"}, ownUID(bobUID)...)...)
	env := []string{"MINDMOUNT_LLM=ollama", "OLLAMA_HOST=127.0.0.1:9", "MINDMOUNT_MODEL=fake", "MINDMOUNT_API_KEY="}
	cmd, logs, base := startServeHTTP(t, root, env)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/health")
		if err != nil {
			t.Fatal(err)
		}
		var h struct{ UsersLoaded int }
		json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if h.UsersLoaded == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("users loaded: %d, want 2\n%s", h.UsersLoaded, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	stopMindmount(t, cmd, logs)
}
