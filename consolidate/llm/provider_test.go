package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// The schema of a test call: "title" and "maxItems" are there to check
// that the OpenAI client reduces it to the strict subset.
const schemaExtract = "mindmount_extract"

var extractSchema = json.RawMessage(`{"title":"mindmount_extract","type":"object","properties":{"facts":{"type":"array","maxItems":8,"items":{"type":"object"}}},"required":["facts"],"additionalProperties":false}`)

// providers returns the three production clients pointed at one fake
// server.
func providers(t *testing.T, s *llmtest.Server) map[string]ChatProvider {
	t.Helper()
	return map[string]ChatProvider{
		"ollama":    NewOllama(s.OllamaURL(), "fake"),
		"openai":    NewOpenAI(s.OpenAIURL(), "sk-test-secret-key-0123456789", "fake"),
		"anthropic": NewAnthropic(s.AnthropicURL(), "sk-test-secret-key-0123456789", "fake", 0),
	}
}

func TestProviderChat(t *testing.T) {
	s := llmtest.New(t)
	want := `{"facts":[{"kind":"user","slug":"likes-tea","description":"Likes green tea","fact":"You like green tea — ünïcode ✓.","episode":""}]}`
	s.Handle(func(c llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: want} })
	for name, p := range providers(t, s) {
		t.Run(name, func(t *testing.T) {
			got, err := p.Chat(context.Background(), ChatRequest{System: "MINDMOUNT-TASK: extract", Prompt: "hello", SchemaName: schemaExtract, Schema: extractSchema})
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("got %q", got)
			}
			calls := s.Calls()
			c := calls[len(calls)-1]
			if c.Kind != llmtest.KindExtract || c.Prompt != "hello" || !strings.Contains(c.System, "MINDMOUNT-TASK") {
				t.Fatalf("recorded %+v", c)
			}
			if !strings.Contains(string(c.Schema), `"facts"`) {
				t.Fatalf("schema not sent: %s", c.Schema)
			}
			if name == "ollama" && !c.Stream {
				t.Fatal("ollama call should stream")
			}
			if name == "openai" {
				if !strings.Contains(string(c.Body), `"json_schema"`) || !strings.Contains(string(c.Body), `"strict":true`) {
					t.Fatalf("response_format missing: %s", c.Body)
				}
				if strings.Contains(string(c.Schema), "title") || strings.Contains(string(c.Schema), "maxItems") || !strings.Contains(string(c.Schema), "additionalProperties") {
					t.Fatalf("schema not reduced to the strict subset: %s", c.Schema)
				}
				if c.Header.Get("Authorization") != "Bearer sk-test-secret-key-0123456789" {
					t.Fatal("no bearer token")
				}
			}
			if name == "anthropic" {
				if !strings.Contains(string(c.Body), `"output_config"`) || strings.Contains(string(c.Schema), "maxItems") {
					t.Fatalf("structured output not asked for: %s", c.Body)
				}
				if c.Header.Get("Authorization") != "Bearer sk-test-secret-key-0123456789" {
					t.Fatal("no credential")
				}
			}
		})
	}
}

func TestProviderEmbed(t *testing.T) {
	s := llmtest.New(t)
	for name, p := range providers(t, s) {
		t.Run(name, func(t *testing.T) {
			v, err := p.Embed(context.Background(), []string{"green tea", "black coffee"})
			if name == "anthropic" {
				if err == nil || !strings.Contains(err.Error(), "no embedding") {
					t.Fatalf("anthropic embeds? %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(v) != 2 || len(v[0]) != 64 {
				t.Fatalf("got %d vectors", len(v))
			}
		})
	}
}

func TestProviderFailures(t *testing.T) {
	cases := []struct {
		name  string
		reply llmtest.Reply
		want  string
	}{
		{"http 500", llmtest.Reply{Status: 500, Error: "model crashed"}, "model crashed"},
		{"broken wire", llmtest.Reply{Raw: "<html>proxy error</html>"}, ""},
		{"truncated stream", llmtest.Reply{Content: `{"facts":[`, Truncate: true}, ""},
		{"length limit", llmtest.Reply{Content: `{"facts":[`, DoneReason: "length"}, "length"},
		{"rambling", llmtest.Reply{Content: strings.Repeat("la ", 100000)}, ""},
	}
	for _, tc := range cases {
		s := llmtest.New(t)
		for name, p := range providers(t, s) {
			if tc.reply.Truncate && name != "ollama" {
				continue // structured chat does not stream there
			}
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				s.Queue(llmtest.KindExtract, tc.reply)
				_, err := p.Chat(context.Background(), ChatRequest{System: "MINDMOUNT-TASK: extract", SchemaName: schemaExtract, Schema: extractSchema})
				if err == nil {
					t.Fatal("no error")
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %q does not mention %q", err, tc.want)
				}
				if strings.Contains(err.Error(), "sk-test-secret") {
					t.Fatalf("error leaks the API key: %v", err)
				}
			})
		}
	}
}

func TestProviderTimeoutAndRefused(t *testing.T) {
	s := llmtest.New(t)
	ps := providers(t, s)
	ps["ollama"].(*Ollama).Timeout = 50 * time.Millisecond
	ps["openai"].(*OpenAI).Timeout = 50 * time.Millisecond
	ps["anthropic"].(*Anthropic).Timeout = 50 * time.Millisecond
	for name, p := range ps {
		t.Run("timeout/"+name, func(t *testing.T) {
			s.Queue(llmtest.KindExtract, llmtest.Reply{Hang: true})
			_, err := p.Chat(context.Background(), ChatRequest{System: "MINDMOUNT-TASK: extract", SchemaName: schemaExtract, Schema: extractSchema})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("want a timeout, got %v", err)
			}
		})
	}
	s.Close()
	for name, p := range ps {
		t.Run("refused/"+name, func(t *testing.T) {
			_, err := p.Chat(context.Background(), ChatRequest{System: "MINDMOUNT-TASK: extract", SchemaName: schemaExtract, Schema: extractSchema})
			if !errors.Is(err, ErrNoModel) {
				t.Fatalf("want ErrNoModel, got %v", err)
			}
			if strings.Contains(err.Error(), "sk-test-secret") {
				t.Fatalf("error leaks the API key: %v", err)
			}
			if e, ok := p.(Endpoint); !ok || e.Ping(context.Background()) == nil {
				t.Fatal("ping should fail on a closed server")
			}
		})
	}
}

func TestOpenAIKeyNeverInErrors(t *testing.T) {
	s := llmtest.New(t)
	key := "sk-live-abcdefghijklmnopqrstuvwxyz012345"
	// Some servers echo the key they rejected.
	s.Queue(llmtest.KindExtract, llmtest.Reply{Status: 401, Error: "Incorrect API key provided: " + key})
	p := NewOpenAI(s.OpenAIURL(), key, "fake")
	_, err := p.Chat(context.Background(), ChatRequest{System: "MINDMOUNT-TASK: extract", SchemaName: schemaExtract, Schema: extractSchema})
	if err == nil || strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "abcdefghijklmnop") {
		t.Fatalf("error leaks the key: %v", err)
	}
	if !strings.Contains(err.Error(), "401") {
		t.Fatalf("error should say 401: %v", err)
	}
}

func TestParseOllamaHost(t *testing.T) {
	for in, want := range map[string]string{
		"localhost":                "http://localhost:11434",
		"localhost:8080":           "http://localhost:8080",
		"http://10.0.0.1:11434":    "http://10.0.0.1:11434",
		"https://ollama.example":   "https://ollama.example:443",
		"http://[::1]:11434/proxy": "http://[::1]:11434/proxy",
	} {
		if got := parseOllamaHost(in).String(); got != want {
			t.Errorf("%s: got %s want %s", in, got, want)
		}
	}
}

func TestOpenAIFormatFallback(t *testing.T) {
	s := llmtest.New(t)
	p := NewOpenAI(s.OpenAIURL(), "", "old-server")
	s.Queue(llmtest.KindExtract,
		llmtest.Reply{Status: 400, Error: "response_format type json_schema is not supported"},
		llmtest.Reply{Status: 400, Error: "Unknown response_format: json_object"},
		llmtest.Reply{Content: `{"facts":[]}`},
		llmtest.Reply{Content: `{"facts":[]}`})
	for i := 0; i < 2; i++ {
		if _, err := p.Chat(context.Background(), ChatRequest{System: "MINDMOUNT-TASK: extract", SchemaName: schemaExtract, Schema: extractSchema}); err != nil {
			t.Fatal(err)
		}
	}
	cs := s.Calls()
	if len(cs) != 4 {
		t.Fatalf("%d calls", len(cs))
	}
	if !strings.Contains(string(cs[0].Body), "json_schema") || !strings.Contains(string(cs[1].Body), `"json_object"`) ||
		strings.Contains(string(cs[2].Body), "response_format") || !strings.Contains(cs[2].System, `"facts"`) {
		t.Fatalf("fallback sequence wrong:\n%s\n%s\n%s", cs[0].Body, cs[1].Body, cs[2].Body)
	}
	if strings.Contains(string(cs[3].Body), "response_format") {
		t.Fatal("the fallback should be remembered")
	}
	// Other 400s are errors, not fallbacks.
	s.Queue(llmtest.KindExtract, llmtest.Reply{Status: 400, Error: "context length exceeded"})
	if _, err := p.Chat(context.Background(), ChatRequest{System: "MINDMOUNT-TASK: extract", SchemaName: schemaExtract, Schema: extractSchema}); err == nil || !strings.Contains(err.Error(), "context length") {
		t.Fatalf("err %v", err)
	}
}

func TestOllamaLegacyFormatFallback(t *testing.T) {
	s := llmtest.New(t)
	p := NewOllama(s.OllamaURL(), "old")
	s.Queue(llmtest.KindExtract,
		llmtest.Reply{Status: 400, Error: `invalid format: expected "json" or a JSON schema`},
		llmtest.Reply{Content: `{"facts":[]}`})
	if _, err := p.Chat(context.Background(), ChatRequest{System: "MINDMOUNT-TASK: extract", SchemaName: schemaExtract, Schema: extractSchema}); err != nil {
		t.Fatal(err)
	}
	cs := s.Calls()
	if len(cs) != 2 || string(cs[1].Schema) != `"json"` || !strings.Contains(cs[1].System, `"facts"`) {
		t.Fatalf("calls %+v", cs)
	}
}

// TestModelErrorsOneLine: a server's error text reaches the error as one
// bounded line, and a key echoed across the cut is redacted before the cut
// (a cut first would leave a prefix the scrubber no longer recognises).
func TestModelErrorsOneLine(t *testing.T) {
	// A key of plain words: only the exact match finds it, not a pattern.
	key := "my-own-proxy-key-correct-horse-battery-staple"
	msg := "Incorrect API key\nprovided:\r\n" + strings.Repeat("x", 240) + "\n" + key + "\n" + strings.Repeat("tail ", 200)
	s := llmtest.New(t)
	for name, p := range map[string]ChatProvider{
		"openai":    NewOpenAI(s.OpenAIURL(), key, "fake"),
		"anthropic": NewAnthropic(s.AnthropicURL(), key, "fake", 0),
	} {
		t.Run(name, func(t *testing.T) {
			s.Queue(llmtest.KindExtract, llmtest.Reply{Status: 401, Error: msg})
			_, err := p.Chat(context.Background(), ChatRequest{System: "MINDMOUNT-TASK: extract", SchemaName: schemaExtract, Schema: extractSchema})
			if err == nil {
				t.Fatal("no error")
			}
			e := err.Error()
			if strings.ContainsAny(e, "\r\n") || len(e) > 500 {
				t.Errorf("error is not one bounded line (%d bytes): %q", len(e), e)
			}
			if strings.Contains(e, "my-own-prox") {
				t.Errorf("error leaks the key: %q", e)
			}
			if !strings.Contains(e, "401") || !strings.Contains(e, "Incorrect API key provided:") {
				t.Errorf("error lost the server's words: %q", e)
			}
		})
	}
}
