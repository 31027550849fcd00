// Package llm reaches language models: the Provider interface, its Ollama,
// OpenAI-compatible and Anthropic clients, streaming chat, and Pool, the one
// bounded and fair queue of model calls a daemon shares between its users.
// It is used by consolidation, recall (embeddings) and the HTTP chat front;
// it reads no environment — cmd/mindmount turns variables and flags into a
// Provider.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/mindmount/mindmount/memgraph/secret"
)

// ChatRequest is one structured-output call: a system prompt, a user prompt
// and the JSON schema the answer must follow.
type ChatRequest struct {
	System     string
	Prompt     string
	SchemaName string          // "mindmount_extract", "mindmount_decide"
	Schema     json.RawMessage // JSON schema of the answer
}

// Provider reaches a language model. Implementations: Ollama (NewOllama),
// any OpenAI-compatible endpoint (NewOpenAI) and Anthropic (NewAnthropic).
// Chat returns the raw answer text, which callers treat as untrusted input.
type Provider interface {
	Chat(ctx context.Context, req ChatRequest) (string, error)
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Name() string  // "ollama", "openai" or "anthropic"
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

// NoModelHelp names, in one line, the three ways to a model: every error
// and status that comes from a missing model ends with it.
const NoModelHelp = "no model yet? run Ollama (MINDMOUNT_LLM=ollama), or set MINDMOUNT_LLM=openai with OPENAI_API_KEY (and OPENAI_BASE_URL for any OpenAI-compatible server) or MINDMOUNT_LLM=anthropic with ANTHROPIC_API_KEY, or try the bundled fake: go run ./scripts/fakellm (README: \"No model yet?\")"

// Default models, used when no model is named (MINDMOUNT_MODEL, --model).
const (
	DefaultOllamaModel    = "llama3.2"
	DefaultOpenAIModel    = "gpt-4o-mini"
	DefaultOpenAIEmbed    = "text-embedding-3-small"
	DefaultAnthropicModel = "claude-haiku-4-5"
	DefaultTimeout        = 5 * time.Minute // local models on a CPU are slow
	MaxAnswerBytes        = 256 << 10       // a structured answer larger than this is no answer
	maxResponse           = 16 << 20        // bound on what is read from a server
	pingTimeout           = 5 * time.Second
)

// callContext bounds one model call by the provider's timeout.
func callContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		d = DefaultTimeout
	}
	return context.WithTimeout(ctx, d)
}

// wrapCallError gives transport failures one shape: unreachable servers
// wrap ErrNoModel, and a timeout says how long was waited.
func wrapCallError(provider, endpoint string, ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s at %s: no answer before the timeout: %w", provider, endpoint, context.DeadlineExceeded)
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s at %s: %w", provider, endpoint, context.Canceled)
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return fmt.Errorf("%s at %s: %w: %v", provider, endpoint, ErrNoModel, op.Err)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Errorf("%s at %s: %w: %v", provider, endpoint, ErrNoModel, dns)
	}
	return fmt.Errorf("%s at %s: %w", provider, endpoint, err)
}

// scrubText removes the API key (servers sometimes echo it) and anything
// else that looks like a secret (memgraph/secret's rules) from text bound
// for an error or a log.
func scrubText(s, apiKey string) string {
	if apiKey != "" {
		s = strings.ReplaceAll(s, apiKey, "[REDACTED]")
	}
	r, _ := secret.Redact(s)
	return r
}
