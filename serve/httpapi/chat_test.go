package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// TestChatStream: for each provider, the answer arrives chunk by chunk
// while the model still holds the rest back; the stream is OpenAI chunks
// ending with [DONE]; the system prompt holds CONTEXT.md and the recalled
// memories, marked; the transcript holds both messages.
func TestChatStream(t *testing.T) {
	for _, provider := range []string{"ollama", "openai", "anthropic"} {
		t.Run(provider, func(t *testing.T) {
			e := newEnv(t, provider, nil)
			os.WriteFile(e.userPath("alice", "user_memory/likes-green-tea.md"), []byte("---\ndescription: Likes green tea\n---\n# Likes green tea\n\n## Fact\nYou like green tea, especially sencha.\n"), 0o644)
			e.h.Unload(t.Context(), "alice") // rescan on next load
			hold := make(chan struct{})
			answer := "Hello Alice! A designer who likes sencha — lovely. ✓"
			e.model.Queue(llmtest.KindOther, llmtest.Reply{Content: answer, Hold: hold})
			resp := e.do("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"Hi, I work as a designer. Any tea ideas?","sessionId":"s1"}`)
			defer resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			s := &sse{r: bufio.NewReader(resp.Body)}
			first := s.next(t) // role chunk
			if content(t, first) != "" {
				t.Fatalf("first chunk %s", first)
			}
			got := content(t, s.next(t))
			if got == "" || got == answer || !strings.HasPrefix(answer, got) {
				t.Fatalf("first piece %q", got)
			}
			close(hold) // only now may the rest come
			var b strings.Builder
			b.WriteString(got)
			done := false
			for {
				d := s.next(t)
				if d == "" {
					break
				}
				if d == "[DONE]" {
					done = true
					continue
				}
				b.WriteString(content(t, d))
			}
			if !done || b.String() != answer {
				t.Fatalf("done %v, answer %q", done, b.String())
			}
			calls := e.model.CallsOf(llmtest.KindOther)
			sys := calls[len(calls)-1].System
			if !strings.Contains(sys, recalledOpen) || !strings.Contains(sys, "user_memory/likes-green-tea.md: Likes green tea") || !strings.Contains(sys, recalledClose) {
				t.Fatalf("recalled memories missing from the system prompt:\n%s", sys)
			}
			if !strings.Contains(sys, "Alice") { // user.md, through CONTEXT.md
				t.Fatalf("compiled context missing:\n%s", sys)
			}
			ts := e.transcripts("alice")
			if len(ts) != 1 || len(e.transcripts("bob")) != 0 {
				t.Fatalf("transcripts %v", ts)
			}
			lines := readLines(t, ts[0])
			if len(lines) != 2 || lines[0].Role != "user" || !strings.Contains(lines[0].Content, "designer") || lines[1].Content != answer || lines[1].Cut {
				t.Fatalf("transcript %+v", lines)
			}
			// A second message of the session carries the history.
			e.model.Queue(llmtest.KindOther, llmtest.Reply{Content: "Try a gyokuro."})
			resp2 := e.do("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"Something stronger?","sessionId":"s1"}`)
			readAll(resp2)
			calls = e.model.CallsOf(llmtest.KindOther)
			if p := calls[len(calls)-1].Prompt; !strings.Contains(p, "designer") || !strings.Contains(p, answer) || !strings.Contains(p, "Something stronger?") {
				t.Fatalf("history not sent: %q", p)
			}
			if n := len(readLines(t, ts[0])); n != 4 {
				t.Fatalf("%d transcript lines", n)
			}
		})
	}
}

// TestChatDisconnect: a client that leaves mid-answer leaves a transcript
// that says the answer was cut, and the model slot is freed.
func TestChatDisconnect(t *testing.T) {
	e := newEnv(t, "openai", nil)
	hold := make(chan struct{})
	defer close(hold)
	e.model.Queue(llmtest.KindOther, llmtest.Reply{Content: "The first words and then much more that never arrives", Hold: hold})
	resp := e.do("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"Tell me a long story"}`)
	s := &sse{r: bufio.NewReader(resp.Body)}
	s.next(t)
	first := content(t, s.next(t))
	resp.Body.Close() // the client goes away while the model is mid-answer
	// The handler writes the cut answer once it notices; the pool's slot
	// coming free is the handshake.
	for {
		st := e.pool.Stats()
		ts := e.transcripts("alice")
		if st.Running == 0 && len(ts) == 1 && len(readLines(t, ts[0])) == 2 {
			break
		}
		runtimeGosched()
	}
	lines := readLines(t, e.transcripts("alice")[0])
	a := lines[1]
	if a.Role != "assistant" || !a.Cut || !strings.HasPrefix(a.Content, first) || !strings.Contains(a.Content, cutNote) {
		t.Fatalf("cut answer %+v", a)
	}
}

func TestChatErrors(t *testing.T) {
	var logs bytes.Buffer
	logOut = &logs
	defer func() { logOut = io.Discard }()
	e := newEnv(t, "ollama", nil)
	// A client that asks for JSON gets the status.
	e.model.Queue(llmtest.KindOther, llmtest.Reply{Status: 500, Error: "model crashed while reading SECRET-PROMPT"})
	code, body := e.status("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"hi PRIVATE-MESSAGE"}`, "Accept", "application/json")
	if code != http.StatusBadGateway || strings.Contains(body["error"].(string), "SECRET") {
		t.Fatalf("%d %v\n%s", code, body, logs.String())
	}
	// Any other client reads the stream it always reads, as the reference
	// server sends it: 200, an error event, then [DONE].
	e.model.Queue(llmtest.KindOther, llmtest.Reply{Status: 500, Error: "model crashed while reading SECRET-PROMPT"})
	resp := e.do("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"hi again"}`)
	stream := readAll(resp)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" ||
		stream != "data: {\"error\":\"the model call failed\"}\n\ndata: [DONE]\n\n" {
		t.Fatalf("%d %q", resp.StatusCode, stream)
	}
	if l := logs.String(); strings.Contains(l, "SECRET-PROMPT") || strings.Contains(l, "PRIVATE-MESSAGE") || strings.Contains(l, adminKey) || !strings.Contains(l, "model call failed") {
		t.Fatalf("log:\n%s", l)
	}
	// The model never answered: nothing of the request is recorded
	// (issue 23, item 9).
	if ts := e.transcripts("alice"); len(ts) != 0 {
		t.Fatalf("transcript after a failed call: %v", ts)
	}
	// No model configured: 503.
	e2 := newEnv(t, "ollama", func(c *Config) { c.Pool = nil })
	if code, _ := e2.status("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"hi"}`); code != http.StatusServiceUnavailable {
		t.Fatalf("no model: %d", code)
	}
}

type tline struct {
	Role, Content string
	Cut           bool
}

func readLines(t *testing.T, path string) []tline {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []tline
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var x tline
		if err := json.Unmarshal([]byte(l), &x); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, x)
	}
	return out
}

func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	var b strings.Builder
	bufio.NewReader(resp.Body).WriteTo(&b)
	return b.String()
}
