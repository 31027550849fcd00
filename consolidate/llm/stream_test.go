package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// TestProviderStream reads the answer piece by piece as the fake server
// sends it: the first piece must arrive while the server still holds the
// rest back, so streaming is real and not a buffered whole.
func TestProviderStream(t *testing.T) {
	s := llmtest.New(t)
	answer := "Hello Alice — nice to meet a designer. ünïcode ✓ and more words to split."
	for name, p := range providers(t, s) {
		t.Run(name, func(t *testing.T) {
			hold := make(chan struct{})
			s.Queue(llmtest.KindOther, llmtest.Reply{Content: answer, Hold: hold})
			deltas := make(chan string, 100)
			errc := make(chan error, 1)
			go func() {
				errc <- p.Stream(context.Background(), []Message{
					{Role: "system", Content: "You are helpful. MEMORY: likes tea"},
					{Role: "user", Content: "Hi, I work as a designer"},
				}, func(d string) error { deltas <- d; return nil })
				close(deltas)
			}()
			first := <-deltas
			if first == "" || !strings.HasPrefix(answer, first) || first == answer {
				t.Fatalf("first piece %q", first)
			}
			close(hold)
			var b strings.Builder
			b.WriteString(first)
			for d := range deltas {
				b.WriteString(d)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if b.String() != answer {
				t.Fatalf("got %q", b.String())
			}
			calls := s.Calls()
			c := calls[len(calls)-1]
			if !c.Stream || c.API != name || !strings.Contains(c.System, "MEMORY: likes tea") || c.Prompt != "Hi, I work as a designer" {
				t.Fatalf("recorded %+v", c)
			}
		})
	}
}

func TestProviderStreamFailures(t *testing.T) {
	s := llmtest.New(t)
	msgs := []Message{{Role: "user", Content: "hi"}}
	for name, p := range providers(t, s) {
		t.Run("cut/"+name, func(t *testing.T) {
			s.Queue(llmtest.KindOther, llmtest.Reply{Content: "half an answer that stops", Truncate: true})
			var got strings.Builder
			err := p.Stream(context.Background(), msgs, func(d string) error { got.WriteString(d); return nil })
			if !errors.Is(err, ErrStreamCut) {
				t.Fatalf("want ErrStreamCut, got %v", err)
			}
			if got.String() != "half an answer that stops" {
				t.Fatalf("delivered %q", got.String())
			}
		})
		t.Run("reader gone/"+name, func(t *testing.T) {
			gone := errors.New("client went away")
			s.Queue(llmtest.KindOther, llmtest.Reply{Content: strings.Repeat("word ", 50)})
			n := 0
			err := p.Stream(context.Background(), msgs, func(string) error { n++; return gone })
			if !errors.Is(err, gone) || n != 1 {
				t.Fatalf("want the reader's error after one piece, got %v after %d", err, n)
			}
		})
		t.Run("http 500/"+name, func(t *testing.T) {
			s.Queue(llmtest.KindOther, llmtest.Reply{Status: 500, Error: "model crashed"})
			err := p.Stream(context.Background(), msgs, func(string) error { return nil })
			if err == nil || !strings.Contains(err.Error(), "model crashed") || strings.Contains(err.Error(), "sk-test-secret") {
				t.Fatalf("err %v", err)
			}
		})
	}
	s.Close()
	for name, p := range providers(t, s) {
		t.Run("refused/"+name, func(t *testing.T) {
			err := p.Stream(context.Background(), msgs, func(string) error { return nil })
			if !errors.Is(err, ErrNoModel) {
				t.Fatalf("want ErrNoModel, got %v", err)
			}
		})
	}
}

func TestAnthropicKeyNeverInErrors(t *testing.T) {
	s := llmtest.New(t)
	key := "sk-ant-abcdefghijklmnopqrstuvwxyz012345"
	s.Queue(llmtest.KindExtract, llmtest.Reply{Status: 401, Error: "invalid x-api-key: " + key})
	p := NewAnthropic(s.AnthropicURL(), key, "fake", 0)
	_, err := p.Chat(context.Background(), ChatRequest{System: "MINDMOUNT-TASK: extract", SchemaName: schemaExtract, Schema: extractSchema})
	if err == nil || strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("error %v", err)
	}
}

func TestAnthropicOutputFormatFallback(t *testing.T) {
	s := llmtest.New(t)
	p := NewAnthropic(s.AnthropicURL(), "", "old-model", 0)
	s.Queue(llmtest.KindExtract,
		llmtest.Reply{Status: 400, Error: "output_config.format: structured outputs are not supported for this model"},
		llmtest.Reply{Content: `{"facts":[]}`},
		llmtest.Reply{Content: `{"facts":[]}`})
	for i := 0; i < 2; i++ {
		if _, err := p.Chat(context.Background(), ChatRequest{System: "MINDMOUNT-TASK: extract", SchemaName: schemaExtract, Schema: extractSchema}); err != nil {
			t.Fatal(err)
		}
	}
	cs := s.Calls()
	if len(cs) != 3 || !strings.Contains(string(cs[0].Body), "output_config") ||
		strings.Contains(string(cs[1].Body), "output_config") || !strings.Contains(cs[1].System, `"facts"`) ||
		strings.Contains(string(cs[2].Body), "output_config") {
		t.Fatalf("fallback sequence wrong: %d calls", len(cs))
	}
}
