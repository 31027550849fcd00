package llmtest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestOllamaStreamShape checks the wire format against Ollama's: NDJSON
// chunks carrying message.content pieces, then one done chunk with
// done_reason; and a single object when stream is false.
func TestOllamaStreamShape(t *testing.T) {
	s := New(t)
	content := `{"facts":[{"kind":"user","slug":"ünï","description":"d","fact":"f","episode":""}]}`
	s.Queue(KindExtract, Reply{Content: content}, Reply{Content: content})
	body := `{"model":"m","messages":[{"role":"system","content":"MINDMOUNT-TASK: extract"},{"role":"user","content":"hi"}],"format":{"title":"mindmount_extract"}}`
	resp, err := http.Post(s.URL+"/api/chat", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Fatalf("content type %q", ct)
	}
	var got strings.Builder
	lines, done := 0, 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var c struct {
			Message    struct{ Role, Content string }
			Done       bool   `json:"done"`
			DoneReason string `json:"done_reason"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines++
		got.WriteString(c.Message.Content)
		if c.Done {
			done++
			if c.DoneReason != "stop" {
				t.Fatalf("done_reason %q", c.DoneReason)
			}
		}
	}
	if got.String() != content || lines < 3 || done != 1 {
		t.Fatalf("%d lines, %d done, content %q", lines, done, got.String())
	}
	nb := strings.Replace(body, `"model":"m"`, `"model":"m","stream":false`, 1)
	resp2, err := http.Post(s.URL+"/api/chat", "application/json", strings.NewReader(nb))
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	var one struct {
		Message struct{ Content string }
		Done    bool
	}
	if err := json.NewDecoder(resp2.Body).Decode(&one); err != nil || !one.Done || one.Message.Content != content {
		t.Fatalf("non-streaming: %+v %v", one, err)
	}
	if cs := s.CallsOf(KindExtract); len(cs) != 2 || cs[0].System != "MINDMOUNT-TASK: extract" || cs[0].Prompt != "hi" || !cs[0].Stream || cs[1].Stream {
		t.Fatalf("recorded %+v", cs)
	}
}

func TestTagsAndVersion(t *testing.T) {
	s := New(t)
	for _, p := range []string{"/api/tags", "/api/version", "/v1/models"} {
		resp, err := http.Get(s.URL + p)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", p, err, resp)
		}
		resp.Body.Close()
	}
}
