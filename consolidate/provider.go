package consolidate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// ChatRequest is one structured-output call: a system prompt, a user prompt
// and the JSON schema the answer must follow.
type ChatRequest struct {
	System     string
	Prompt     string
	SchemaName string          // "engram_extract", "engram_decide"
	Schema     json.RawMessage // JSON schema of the answer
}

// Provider reaches a language model. Implementations: Ollama (NewOllama) and
// any OpenAI-compatible endpoint (NewOpenAI). Chat returns the raw answer
// text, which callers treat as untrusted input.
type Provider interface {
	Chat(ctx context.Context, req ChatRequest) (string, error)
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Name() string  // "ollama" or "openai"
	Model() string // the chat model
}

// Endpoint is implemented by providers that can say where they are and
// whether the model server answers; the status line uses it.
type Endpoint interface {
	Endpoint() string // base URL, without credentials
	Ping(ctx context.Context) error
}

// ErrNoModel wraps errors that mean the model server could not be reached
// (connection refused, DNS, timeout on connect): consolidation waits for it.
var ErrNoModel = errors.New("model server unreachable")

// Default models when ENGRAM_MODEL is unset.
const (
	DefaultOllamaModel = "llama3.2"
	DefaultOpenAIModel = "gpt-4o-mini"
	DefaultTimeout     = 5 * time.Minute // local models on a CPU are slow
)

// ProviderOptions are the knobs FromEnvWith reads; empty fields fall back to
// the environment, then to defaults.
type ProviderOptions struct {
	LLM        string        // "ollama" or "openai"
	Model      string        // chat model
	EmbedModel string        // embedding model; defaults to Model
	Timeout    time.Duration // per call
}

// FromEnv builds the provider the environment asks for: ENGRAM_LLM
// (ollama, the default, or openai), ENGRAM_MODEL, ENGRAM_EMBED_MODEL,
// ENGRAM_LLM_TIMEOUT (a Go duration), OLLAMA_HOST, OPENAI_BASE_URL and
// OPENAI_API_KEY.
func FromEnv() (Provider, error) { return FromEnvWith(ProviderOptions{}) }

// FromEnvWith is FromEnv with explicit overrides (command-line flags).
func FromEnvWith(o ProviderOptions) (Provider, error) {
	llm := firstNonEmpty(o.LLM, os.Getenv("ENGRAM_LLM"), "ollama")
	model := firstNonEmpty(o.Model, os.Getenv("ENGRAM_MODEL"))
	embed := firstNonEmpty(o.EmbedModel, os.Getenv("ENGRAM_EMBED_MODEL"))
	timeout := o.Timeout
	if timeout == 0 {
		if s := os.Getenv("ENGRAM_LLM_TIMEOUT"); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("ENGRAM_LLM_TIMEOUT=%q is not a positive duration like 90s or 5m", s)
			}
			timeout = d
		}
	}
	switch strings.ToLower(llm) {
	case "ollama":
		p := NewOllama(os.Getenv("OLLAMA_HOST"), firstNonEmpty(model, DefaultOllamaModel))
		p.EmbedModel = firstNonEmpty(embed, p.model)
		if timeout > 0 {
			p.Timeout = timeout
		}
		return p, nil
	case "openai":
		p := NewOpenAI(os.Getenv("OPENAI_BASE_URL"), os.Getenv("OPENAI_API_KEY"), firstNonEmpty(model, DefaultOpenAIModel))
		p.EmbedModel = firstNonEmpty(embed, "text-embedding-3-small")
		if timeout > 0 {
			p.Timeout = timeout
		}
		return p, nil
	}
	return nil, fmt.Errorf("ENGRAM_LLM=%q: want ollama or openai", llm)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// callContext bounds one model call by the provider's timeout.
func callContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		d = DefaultTimeout
	}
	return context.WithTimeout(ctx, d)
}
