package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/serve/host"
)

// waitFor polls cond (a background run's outcome) until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) exists(id, rel string) bool {
	_, err := os.Stat(e.userPath(id, rel))
	return err == nil
}

// TestByeAnswersAtOnce: bye and consolidate answer as the reference
// server does, before the model has answered, and the consolidation runs
// on in the background to its commit.
func TestByeAnswersAtOnce(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.model.Queue(llmtest.KindOther, llmtest.Reply{Content: "Nice to meet you!"})
	readAll(e.do("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"Hi, I work as a designer in Lisbon"}`))
	hold := make(chan struct{})
	e.model.Queue(llmtest.KindExtract, llmtest.Reply{Hold: hold, Content: llmtest.JSON(map[string]any{"facts": []any{map[string]any{
		"kind": "user", "slug": "works-as-designer", "description": "Works as a designer", "fact": "You work as a designer in Lisbon.", "episode": ""}}})})
	e.model.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
	code, body := e.status("POST", "/v1/bye", adminKey, `{"userId":"alice"}`)
	if code != 200 || body["status"] != "bye" || body["consolidated"] != true || len(body) != 2 {
		t.Fatalf("bye: %d %v", code, body)
	}
	if e.exists("alice", "user_memory/works-as-designer.md") {
		t.Fatal("the memory exists before the model answered: bye waited")
	}
	close(hold)
	waitFor(t, "the background consolidation", func() bool { return e.exists("alice", "user_memory/works-as-designer.md") })

	// consolidate: the reference's answer, then the memory.
	e.scriptFact("allergic-to-nuts", "Allergic to nuts", "You are allergic to nuts.")
	code, body = e.status("POST", "/v1/consolidate", adminKey, `{"userId":"bob","transcript":[{"role":"user","content":"I am allergic to nuts"},{"role":"assistant","content":"Noted."}]}`)
	if code != 200 || body["status"] != "consolidating" || body["user_id"] != "bob" || body["messages"] != 2.0 {
		t.Fatalf("consolidate: %d %v", code, body)
	}
	waitFor(t, "bob's memory", func() bool { return e.exists("bob", "user_memory/allergic-to-nuts.md") })
	// Nothing to consolidate: "empty", as the reference says it.
	for _, tr := range []string{`[]`, `[{"role":"developer","content":"be brief"}]`} {
		code, body = e.status("POST", "/v1/consolidate", adminKey, `{"userId":"bob","transcript":`+tr+`}`)
		if code != 200 || body["status"] != "empty" {
			t.Fatalf("consolidate %s: %d %v", tr, code, body)
		}
	}
}

// TestConsolidateMessageShapes: list content (OpenAI's and Anthropic's
// blocks) counts its text blocks; roles the reference's clients send that
// consolidation does not read are left out, not refused; a numeric userId
// is its text.
func TestConsolidateMessageShapes(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.scriptFact("allergic-to-nuts", "Allergic to nuts", "You are allergic to nuts.")
	body := `{"userId":"bob","wait":true,"transcript":[
		{"role":"system","content":"You are helpful."},
		{"role":"developer","content":"Answer briefly."},
		{"role":"user","content":[{"type":"text","text":"I am allergic"},{"type":"image_url","image_url":{"url":"data:x"}},{"type":"text","text":"to nuts"}]},
		{"role":"function","name":"f","content":"{}"},
		{"role":"assistant","content":null},
		{"role":"assistant","content":[{"type":"text","text":"Noted."}]}]}`
	code, v := e.status("POST", "/v1/consolidate", adminKey, body)
	if code != 200 || v["status"] != "ok" || v["added"] != 1.0 {
		t.Fatalf("%d %v", code, v)
	}
	// What reached the inbox: the kept roles, the text blocks joined.
	var got []string
	for _, p := range e.transcripts("bob") {
		for _, l := range readLines(t, p) {
			got = append(got, l.Role+": "+l.Content)
		}
	}
	want := []string{"system: You are helpful.", "user: I am allergic to nuts", "assistant: Noted."}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("inbox:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A number is a user ID as its text: 42 is not registered, so 404.
	if code, v := e.status("POST", "/v1/bye", adminKey, `{"userId":42}`); code != 404 || !strings.Contains(v["error"].(string), `"42"`) {
		t.Fatalf("numeric userId: %d %v", code, v)
	}
}

// TestLastChunkHasContent: every chunk of a stream has delta.content, the
// last one (finish_reason "stop") too, so a client indexing
// delta["content"] never fails.
func TestLastChunkHasContent(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.model.Queue(llmtest.KindOther, llmtest.Reply{Content: "Hello there, friend."})
	resp := e.do("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"hi"}`)
	stream := readAll(resp)
	var chunks []map[string]any
	for _, l := range strings.Split(stream, "\n") {
		d, ok := strings.CutPrefix(l, "data: ")
		if !ok || d == "[DONE]" {
			continue
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, c)
	}
	if len(chunks) < 3 {
		t.Fatalf("stream %q", stream)
	}
	for i, c := range chunks {
		delta := c["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)
		if _, ok := delta["content"].(string); !ok {
			t.Fatalf("chunk %d has no delta.content: %v", i, c)
		}
	}
	last := chunks[len(chunks)-1]["choices"].([]any)[0].(map[string]any)
	if last["finish_reason"] != "stop" || last["delta"].(map[string]any)["content"] != "" {
		t.Fatalf("last chunk %v", last)
	}
}

// TestCORS: off by default; with origins, an allowed origin's preflight is
// answered before auth and its answers carry the header; another origin
// gets none, and its preflight is 403.
func TestCORS(t *testing.T) {
	preflight := func(e *env, origin string) *http.Response {
		req, _ := http.NewRequest("OPTIONS", e.srv.URL+"/v1/chat", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	off := newEnv(t, "ollama", nil)
	if r := preflight(off, "https://app.example.com"); r.Header.Get("Access-Control-Allow-Origin") != "" || r.StatusCode == 204 {
		t.Fatalf("CORS without --cors: %d %v", r.StatusCode, r.Header)
	}
	e := newEnv(t, "ollama", func(c *Config) { c.CORS = []string{"https://app.example.com"} })
	r := preflight(e, "https://app.example.com")
	if r.StatusCode != 204 || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "Authorization") || !strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("allowed preflight: %d %v", r.StatusCode, r.Header)
	}
	if r := preflight(e, "https://evil.example"); r.StatusCode != 403 || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("other origin's preflight: %d %v", r.StatusCode, r.Header)
	}
	resp := e.do("GET", "/v1/recall?userId=alice&q=tea", adminKey, "", "Origin", "https://app.example.com")
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Fatalf("allowed origin's answer: %d %v", resp.StatusCode, resp.Header)
	}
	resp = e.do("GET", "/v1/recall?userId=alice&q=tea", "", "", "Origin", "https://app.example.com")
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("CORS let a request past auth: %d", resp.StatusCode)
	}
	star := newEnv(t, "ollama", func(c *Config) { c.CORS = []string{"*"} })
	if r := preflight(star, "https://any.example"); r.StatusCode != 204 || r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("*: %d %v", r.StatusCode, r.Header)
	}
	for _, bad := range []string{"app.example.com", "https://app.example.com/path", "ftp://x", "https://", "https://u:p@x"} {
		if CheckOrigin(bad) == nil {
			t.Errorf("CheckOrigin(%q) accepted", bad)
		}
	}
}

// TestAutoUsers: with Provision, a userId the registry does not know is
// provisioned on first use under the ID host.IDFor gives it, once; IDs
// that differ in punctuation or case stay apart; a registered user is
// itself; without Provision an unknown user is 404 with the hint.
func TestAutoUsers(t *testing.T) {
	var provisioned []string
	var e *env
	e = newEnv(t, "ollama", func(c *Config) {
		c.Provision = func(ctx context.Context, id string) error {
			provisioned = append(provisioned, id)
			newUser(t, e.root, id, 0)
			return e.h.Reload()
		}
	})
	for _, ref := range []string{`"alice.bob"`, `"alice_bob"`, `"Alice"`, `1234`, `"alice.bob"`} {
		if code, v := e.status("POST", "/v1/consolidate", adminKey, `{"userId":`+ref+`,"transcript":[]}`); code != 200 || v["status"] != "empty" {
			t.Fatalf("%s: %d %v", ref, code, v)
		}
	}
	want := []string{"alice.bob", "alice_bob", host.IDFor("Alice"), "1234"}
	if strings.Join(provisioned, " ") != strings.Join(want, " ") {
		t.Fatalf("provisioned %v, want %v", provisioned, want)
	}
	// alice is registered: no provisioning; her repository answers.
	if code, _ := e.status("GET", "/v1/recall?userId=alice&q=tea", adminKey, ""); code != 200 || len(provisioned) != 4 {
		t.Fatalf("registered user: %d, provisioned %v", code, provisioned)
	}
	// A registered ID that has the form of a derived one is itself too.
	newUser(t, e.root, "team--x", 0)
	if code, _ := e.status("GET", "/v1/recall?userId=team--x&q=tea", adminKey, ""); code != 200 || len(provisioned) != 4 {
		t.Fatalf("registered team--x: %d, provisioned %v", code, provisioned)
	}
	// A user token only acts for its own user, so it cannot make others.
	tok, _, err := NewToken(e.root, "alice", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := e.status("POST", "/v1/bye", tok, `{"userId":"mallory"}`); code != 403 || len(provisioned) != 4 {
		t.Fatalf("a token provisioned another user: %d %v", code, provisioned)
	}
	off := newEnv(t, "ollama", nil)
	code, v := off.status("POST", "/v1/bye", adminKey, `{"userId":"carol"}`)
	if code != 404 || !strings.Contains(v["error"].(string), "--auto-users") {
		t.Fatalf("without auto-users: %d %v", code, v)
	}
}

// TestPostedNameHasNoCardNumber: a posted transcript's name, which reaches
// every memory's source line, never holds a run of 13 or more digits (the
// secret scanner's card numbers).
func TestPostedNameHasNoCardNumber(t *testing.T) {
	long := regexp.MustCompile(`[0-9]{13,}`)
	for i := 0; i < 1000; i++ {
		n := postedName(time.Now())
		if long.MatchString(n) || !strings.HasSuffix(n, ".jsonl") {
			t.Fatalf("posted transcript name %q", n)
		}
	}
}
