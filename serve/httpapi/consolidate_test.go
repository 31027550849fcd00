package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// scriptFact makes the fake model extract one fact and add it.
func (e *env) scriptFact(slug, desc, fact string) {
	e.model.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []any{map[string]any{
		"kind": "user", "slug": slug, "description": desc, "fact": fact, "episode": ""}}})})
	e.model.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
}

// TestByeConsolidates: a conversation, then bye: the reply counts what
// consolidation did, the memory and its commit land in alice's repository
// only, and the transcript is never committed.
func TestByeConsolidates(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	bobHead := git(t, e.userPath("bob", ""), "rev-parse", "HEAD")
	e.model.Queue(llmtest.KindOther, llmtest.Reply{Content: "Nice to meet you!"})
	readAll(e.do("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"Hi, I work as a designer in Lisbon"}`))
	e.scriptFact("works-as-designer", "Works as a designer", "You work as a designer in Lisbon.")
	code, body := e.status("POST", "/v1/bye?wait=1", adminKey, `{"userId":"alice"}`)
	if code != 200 || body["status"] != "ok" || body["added"].(float64) != 1 || body["updated"].(float64) != 0 ||
		body["contradicted"].(float64) != 0 || body["unchanged"].(float64) != 0 {
		t.Fatalf("%d %v", code, body)
	}
	if !strings.Contains(e.readFile("alice", "user_memory/works-as-designer.md"), "designer in Lisbon") {
		t.Fatal("no memory")
	}
	dir := e.userPath("alice", "")
	if log := git(t, dir, "log", "--format=%an", "-1", "--", "user_memory/works-as-designer.md"); strings.TrimSpace(log) == "" {
		t.Fatal("the memory is not committed")
	}
	if tracked := git(t, dir, "ls-files", "transcripts"); strings.Contains(tracked, ".jsonl") {
		t.Fatalf("a transcript reached git: %s", tracked)
	}
	if git(t, e.userPath("bob", ""), "rev-parse", "HEAD") != bobHead || len(e.transcripts("bob")) != 0 {
		t.Fatal("bob's repository changed")
	}
	// Nothing new: bye says so.
	code, body = e.status("POST", "/v1/bye", adminKey, `{"userId":"alice","wait":true}`)
	if code != 200 || body["added"].(float64) != 0 || body["summary"] != "nothing new to consolidate" {
		t.Fatalf("second bye %d %v", code, body)
	}
}

// TestConsolidateEndpoint: a posted transcript is written and consolidated;
// a model that fails gives a reply that says so, without its text.
func TestConsolidateEndpoint(t *testing.T) {
	e := newEnv(t, "openai", nil)
	e.scriptFact("allergic-to-nuts", "Allergic to nuts", "You are allergic to nuts.")
	code, body := e.status("POST", "/v1/consolidate?wait=1", adminKey, `{"userId":"bob","transcript":[{"role":"user","content":"I am allergic to nuts"},{"role":"assistant","content":"Noted."}]}`)
	if code != 200 || body["added"].(float64) != 1 || body["messages"].(float64) != 2 {
		t.Fatalf("%d %v", code, body)
	}
	if !strings.Contains(e.readFile("bob", "user_memory/allergic-to-nuts.md"), "allergic to nuts") {
		t.Fatal("no memory")
	}
	e.model.Queue(llmtest.KindExtract, llmtest.Reply{Status: 500, Error: "crash quoting PRIVATE-WORDS"})
	code, body = e.status("POST", "/v1/consolidate", adminKey, `{"userId":"bob","wait":true,"transcript":[{"role":"user","content":"PRIVATE-WORDS about me"}]}`)
	if code != http.StatusBadGateway || body["status"] != "failed" || strings.Contains(body["error"].(string), "PRIVATE") {
		t.Fatalf("%d %v", code, body)
	}
}

// TestQueueFull429: when the model pool's queue is full, chat is 429.
func TestQueueFull429(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	hold := make(chan struct{})
	defer close(hold)
	// Two slots held by two streams, then alice's per-user backlog (8) fills.
	for i := 0; i < 2; i++ {
		e.model.Queue(llmtest.KindOther, llmtest.Reply{Content: "held answer words", Hold: hold})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := 0; i < 2+8; i++ {
		sid := strings.Repeat("s", i+1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/v1/chat", strings.NewReader(`{"userId":"alice","message":"hi","sessionId":"`+sid+`"}`))
			req.Header.Set("Authorization", "Bearer "+adminKey)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				readAll(resp)
			}
		}()
	}
	for st := e.pool.Stats(); st.Running != 2 || st.Queued != 8; st = e.pool.Stats() {
		time.Sleep(time.Millisecond)
	}
	code, body := e.status("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"one more","sessionId":"x"}`)
	if code != http.StatusTooManyRequests {
		t.Fatalf("%d %v", code, body)
	}
	// bob is not alice's backlog: he queues (and is served in turn).
	if st := e.pool.Stats(); st.Queued != 8 {
		t.Fatalf("stats %+v", st)
	}
}

func TestHealth(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	code, body := e.status("GET", "/health", "", "")
	if code != 200 || body["status"] != "ok" || body["users"].(float64) != 2 || body["usersLoaded"].(float64) != 0 {
		t.Fatalf("%d %v", code, body)
	}
	if m := body["model"].(map[string]any); m["provider"] != "ollama" || m["lastCallOk"] != nil {
		t.Fatalf("model %v", m)
	}
	e.model.Queue(llmtest.KindOther, llmtest.Reply{Content: "hi"})
	readAll(e.do("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"hi"}`))
	_, body = e.status("GET", "/health", "", "")
	if body["usersLoaded"].(float64) != 1 || body["model"].(map[string]any)["lastCallOk"] != true {
		t.Fatalf("after a chat %v", body)
	}
	e.model.Queue(llmtest.KindOther, llmtest.Reply{Status: 500})
	readAll(e.do("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"hi"}`))
	if _, body = e.status("GET", "/health", "", ""); body["model"].(map[string]any)["lastCallOk"] != false {
		t.Fatalf("after a failed call %v", body)
	}
	e.api.SetClosing()
	if code, body := e.status("GET", "/health", "", ""); code != 503 || body["status"] != "shutting down" {
		t.Fatalf("closing: %d %v", code, body)
	}
}

// TestLogNamesUserOnce: a line about a user names them once — on a
// server of many users, and on a worker's, whose logger names its user
// already (Config.User).
func TestLogNamesUserOnce(t *testing.T) {
	for _, worker := range []bool{false, true} {
		var logs strings.Builder
		var mu sync.Mutex
		log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
		e := newEnv(t, "ollama", func(c *Config) {
			c.Logger = log
			if worker {
				c.User, c.Logger = "alice", log.With("user", "alice")
			}
		})
		if code, body := e.status("POST", "/v1/consolidate", adminKey, `{"userId":"alice","transcript":[{"role":"user","content":"hello"}]}`); code != 200 && code != 202 {
			t.Fatalf("consolidate: %d %v", code, body)
		}
		mu.Lock()
		text := logs.String()
		mu.Unlock()
		named := 0
		for _, l := range strings.Split(text, "\n") {
			if n := strings.Count(l, "user=alice"); n > 1 {
				t.Errorf("worker %v: %q", worker, l)
			} else {
				named += n
			}
		}
		if named == 0 {
			t.Errorf("worker %v: no line names the user:\n%s", worker, text)
		}
	}
}
