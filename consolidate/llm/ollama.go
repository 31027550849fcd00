package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
)

// Ollama talks to an Ollama server through its official Go client.
type Ollama struct {
	base       *url.URL
	client     *api.Client
	model      string
	EmbedModel string        // model for /api/embed; defaults to the chat model
	Timeout    time.Duration // per call; DefaultTimeout when zero
	// Options are passed as the request's model options. The defaults pin
	// temperature 0 (repeatable decisions) and a context large enough for
	// one chunk plus instructions.
	Options map[string]any

	legacyFormat atomic.Bool // the server only knows format "json"
}

var _ Provider = (*Ollama)(nil)
var _ Endpoint = (*Ollama)(nil)

// NewOllama returns a provider for the Ollama server at host ("" means
// OLLAMA_HOST or http://127.0.0.1:11434; "localhost:11434" and bare hosts
// are accepted like the ollama CLI accepts them).
func NewOllama(host, model string) *Ollama {
	base := envconfig.Host()
	if host != "" {
		base = parseOllamaHost(host)
	}
	return &Ollama{
		base:       base,
		client:     api.NewClient(base, &http.Client{}),
		model:      model,
		EmbedModel: model,
		Timeout:    DefaultTimeout,
		Options:    map[string]any{"temperature": 0, "num_ctx": 8192},
	}
}

// parseOllamaHost mirrors envconfig.Host for an explicit value.
func parseOllamaHost(s string) *url.URL {
	s = strings.TrimSpace(s)
	scheme, hostport, ok := strings.Cut(s, "://")
	defaultPort := "11434"
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	}
	hostport, p, _ := strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, defaultPort
		if host == "" {
			host = "127.0.0.1"
		}
	}
	return &url.URL{Scheme: scheme, Host: net.JoinHostPort(strings.Trim(host, "[]"), port), Path: p}
}

func (o *Ollama) Name() string     { return "ollama" }
func (o *Ollama) Model() string    { return o.model }
func (o *Ollama) Endpoint() string { return o.base.Redacted() }

// Ping asks the server for its version: cheap, and it needs no model.
func (o *Ollama) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := o.client.Version(ctx)
	return o.wrap(ctx, err)
}

// Chat asks for an answer following req.Schema (Ollama's structured
// outputs: the schema is the request's format).
func (o *Ollama) Chat(ctx context.Context, req ChatRequest) (string, error) {
	ctx, cancel := callContext(ctx, o.Timeout)
	defer cancel()
	for {
		legacy := o.legacyFormat.Load()
		format, system := req.Schema, req.System
		if legacy && len(req.Schema) > 0 {
			format = json.RawMessage(`"json"`)
			system += "\n\nThe answer must follow this JSON schema:\n" + string(req.Schema)
		}
		out, err := o.chat(ctx, system, req.Prompt, format)
		var se api.StatusError
		if !legacy && errors.As(err, &se) && se.StatusCode == http.StatusBadRequest && strings.Contains(strings.ToLower(se.ErrorMessage), "format") {
			// Ollama before 0.5 takes only "json" as a format: keep the
			// schema in the prompt and remember.
			o.legacyFormat.Store(true)
			continue
		}
		return out, err
	}
}

// chat streams one answer (the default for /api/chat) and returns the
// whole content once the final done chunk arrives. A stream that ends
// without done, or stops because of the length limit, is an error: half a
// JSON document is no answer.
func (o *Ollama) chat(ctx context.Context, system, prompt string, format json.RawMessage) (string, error) {
	stream := true
	var b strings.Builder
	done, reason := false, ""
	err := o.client.Chat(ctx, &api.ChatRequest{
		Model: o.model,
		Messages: []api.Message{
			{Role: "system", Content: system},
			{Role: "user", Content: prompt},
		},
		Stream:  &stream,
		Format:  format,
		Options: o.Options,
	}, func(r api.ChatResponse) error {
		b.WriteString(r.Message.Content)
		if b.Len() > MaxAnswerBytes {
			// A model that rambles on is not going to produce our JSON.
			return fmt.Errorf("the answer exceeds %d bytes", MaxAnswerBytes)
		}
		if r.Done {
			done, reason = true, r.DoneReason
		}
		return nil
	})
	if err != nil {
		return "", o.wrap(ctx, err)
	}
	if !done {
		return "", fmt.Errorf("ollama %s: the answer stream ended before it was done", o.model)
	}
	if reason == "length" {
		return "", fmt.Errorf("ollama %s: the answer was cut off by the length limit", o.model)
	}
	return b.String(), nil
}

// Embed uses /api/embed, which takes a batch of inputs.
func (o *Ollama) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	ctx, cancel := callContext(ctx, o.Timeout)
	defer cancel()
	resp, err := o.client.Embed(ctx, &api.EmbedRequest{Model: o.EmbedModel, Input: texts})
	if err != nil {
		return nil, o.wrap(ctx, err)
	}
	if len(resp.Embeddings) != len(texts) {
		return nil, fmt.Errorf("ollama %s: %d embeddings for %d inputs", o.EmbedModel, len(resp.Embeddings), len(texts))
	}
	return resp.Embeddings, nil
}

func (o *Ollama) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	return wrapCallError("ollama", o.base.Redacted(), ctx, err)
}
