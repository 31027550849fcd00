package httpapi

import (
	"bufio"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// TestSlowSessionBlocksNoOne: while alice's session s1 streams a held
// answer, bob's chat and alice's other session are answered; a second
// message on s1 waits for the first (it would race on the transcript).
func TestSlowSessionBlocksNoOne(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	hold := make(chan struct{})
	e.model.Handle(func(c llmtest.Call) llmtest.Reply {
		if strings.HasSuffix(c.Prompt, "please be slow") {
			return llmtest.Reply{Content: "a slow answer in pieces", Hold: hold}
		}
		return llmtest.Reply{Content: "quick"}
	})
	slow := e.do("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"please be slow","sessionId":"s1"}`)
	defer slow.Body.Close()
	s := &sse{r: bufio.NewReader(slow.Body)}
	s.next(t)
	s.next(t) // the first piece is out; the model holds the rest
	second := make(chan string, 1)
	go func() {
		second <- readAll(e.do("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"after the slow one","sessionId":"s1"}`))
	}()
	for _, body := range []string{`{"userId":"bob","message":"hi"}`, `{"userId":"alice","message":"hi","sessionId":"s2"}`} {
		if out := readAll(e.do("POST", "/v1/chat", adminKey, body)); !strings.Contains(out, "quick") || !strings.HasSuffix(out, "data: [DONE]\n\n") {
			t.Fatalf("%s: %q", body, out)
		}
	}
	select {
	case out := <-second:
		t.Fatalf("the second message of s1 did not wait for the first: %q", out)
	default:
	}
	for _, c := range e.model.Calls() {
		if strings.Contains(c.Prompt, "after the slow one") {
			t.Fatal("the second message of s1 reached the model while the first streamed")
		}
	}
	close(hold)
	if out := <-second; !strings.Contains(out, "quick") {
		t.Fatalf("second: %q", out)
	}
	calls := e.model.Calls()
	last := calls[len(calls)-1]
	if !strings.Contains(last.Prompt, "a slow answer in pieces") {
		t.Fatalf("the second message did not see the first answer: %q", last.Prompt)
	}
}
