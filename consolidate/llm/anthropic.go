package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/mindmount/mindmount/memgraph"
)

// Anthropic talks to Anthropic's Messages API through the official Go SDK.
// The SDK is given everything explicitly and reads no environment
// (option.WithoutEnvironmentDefaults): cmd/mindmount decides.
type Anthropic struct {
	base      string // without credentials; for messages
	apiKey    string // secret: never logged, never in an error
	model     string
	client    anthropic.Client
	Timeout   time.Duration
	MaxTokens int64 // per answer; DefaultAnthropicMaxTokens when zero

	// promptSchema is set once the server refused output_config.format
	// (an older model): the schema then travels in the system prompt.
	promptSchema atomic.Bool
}

// DefaultAnthropicMaxTokens bounds one answer; Anthropic requires a bound.
const DefaultAnthropicMaxTokens = 8192

var (
	_ Provider = (*Anthropic)(nil)
	_ Endpoint = (*Anthropic)(nil)
	_ Streamer = (*Anthropic)(nil)
)

// NewAnthropic returns a provider for baseURL ("" means
// https://api.anthropic.com; the SDK adds /v1/messages) with apiKey.
// retries is how often the SDK retries a failed call (429, 5xx).
func NewAnthropic(baseURL, apiKey, model string, retries int) *Anthropic {
	if baseURL == "" {
		baseURL = "https://api.anthropic.com"
	}
	baseURL = strings.TrimRight(baseURL, "/") + "/"
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithoutOpenTelemetry(), // spans could carry prompt text
		option.WithBaseURL(baseURL),
		option.WithMaxRetries(retries),
		option.WithHTTPClient(&http.Client{}),
	}
	if apiKey != "" {
		opts = append(opts, option.WithAPIKey(apiKey))
	}
	return &Anthropic{
		base:    strings.TrimRight(baseURL, "/"),
		apiKey:  apiKey,
		model:   model,
		client:  anthropic.NewClient(opts...),
		Timeout: DefaultTimeout,
	}
}

func (a *Anthropic) Name() string  { return "anthropic" }
func (a *Anthropic) Model() string { return a.model }

// Endpoint returns the base URL with any user:password removed.
func (a *Anthropic) Endpoint() string {
	if u, err := url.Parse(a.base); err == nil {
		return u.Redacted()
	}
	return "(invalid ANTHROPIC_BASE_URL)"
}

// Ping lists models: cheap, and it checks the key too.
func (a *Anthropic) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	_, err := a.client.Models.List(ctx, anthropic.ModelListParams{})
	return a.wrap(ctx, err)
}

// Embed fails: Anthropic offers no embedding model.
func (a *Anthropic) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("anthropic has no embedding API: use MINDMOUNT_LLM=ollama or openai for mindmount reindex")
}

func (a *Anthropic) maxTokens() int64 {
	if a.MaxTokens > 0 {
		return a.MaxTokens
	}
	return DefaultAnthropicMaxTokens
}

// Chat asks for an answer following req.Schema through structured outputs
// (output_config.format); a server that refuses them gets the schema in
// the system prompt instead, from then on.
func (a *Anthropic) Chat(ctx context.Context, req ChatRequest) (string, error) {
	ctx, cancel := callContext(ctx, a.Timeout)
	defer cancel()
	for {
		inPrompt := a.promptSchema.Load()
		params := anthropic.MessageNewParams{
			Model:     anthropic.Model(a.model),
			MaxTokens: a.maxTokens(),
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(req.Prompt))},
		}
		system := req.System
		if len(req.Schema) > 0 {
			if inPrompt {
				system += "\n\nThe answer must be one JSON document following this JSON schema:\n" + string(req.Schema)
			} else {
				var schema map[string]any
				if err := json.Unmarshal(strictSubset(req.Schema), &schema); err != nil {
					return "", fmt.Errorf("anthropic: the answer schema is not JSON: %v", err)
				}
				params.OutputConfig = anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: schema}}
			}
		}
		if system != "" {
			params.System = []anthropic.TextBlockParam{{Text: system}}
		}
		msg, err := a.client.Messages.New(ctx, params)
		var ae *anthropic.Error
		if !inPrompt && len(req.Schema) > 0 && errors.As(err, &ae) && ae.StatusCode == http.StatusBadRequest && aboutOutputFormat(ae.Message) {
			a.promptSchema.Store(true)
			continue
		}
		if err != nil {
			return "", a.wrap(ctx, err)
		}
		return a.answer(msg)
	}
}

func aboutOutputFormat(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "output_config") || strings.Contains(m, "output_format") || strings.Contains(m, "structured output")
}

// answer joins the text blocks of a finished message.
func (a *Anthropic) answer(msg *anthropic.Message) (string, error) {
	switch msg.StopReason {
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		return "", fmt.Errorf("anthropic %s: the answer was cut off by the length limit", a.model)
	case anthropic.StopReasonRefusal:
		return "", fmt.Errorf("anthropic %s: the model refused", a.model)
	}
	var b strings.Builder
	for _, c := range msg.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	if b.Len() > MaxAnswerBytes {
		return "", fmt.Errorf("anthropic %s: the answer exceeds %d bytes", a.model, MaxAnswerBytes)
	}
	if b.Len() == 0 {
		return "", fmt.Errorf("anthropic %s: the answer has no text", a.model)
	}
	return b.String(), nil
}

// Stream sends msgs through the Messages API's server-sent events and hands
// each text delta to onDelta.
func (a *Anthropic) Stream(ctx context.Context, msgs []Message, onDelta func(string) error) error {
	ctx, cancel := callContext(ctx, a.Timeout)
	defer cancel()
	system, rest := splitSystem(msgs)
	params := anthropic.MessageNewParams{Model: anthropic.Model(a.model), MaxTokens: a.maxTokens()}
	if system != "" {
		params.System = []anthropic.TextBlockParam{{Text: system}}
	}
	for _, m := range rest {
		if m.Role == "assistant" {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(anthropic.NewTextBlock(m.Content)))
		} else {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
		}
	}
	stream := a.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	sink := &deltaSink{fn: onDelta}
	done := false
	for stream.Next() {
		switch ev := stream.Current().AsAny().(type) {
		case anthropic.ContentBlockDeltaEvent:
			if ev.Delta.Type != "text_delta" {
				continue
			}
			if err := sink.send(ev.Delta.Text); err != nil {
				if errors.Is(err, errTooLong) {
					return fmt.Errorf("anthropic %s: %w", a.model, err)
				}
				return err
			}
		case anthropic.MessageStopEvent:
			done = true
		}
	}
	if err := stream.Err(); err != nil {
		return a.wrap(ctx, err)
	}
	if !done {
		return fmt.Errorf("anthropic %s: %w", a.model, ErrStreamCut)
	}
	return nil
}

// wrap gives SDK errors our shape: API errors say status and message
// (never the request, whose headers hold the key), transport errors go
// through wrapCallError.
func (a *Anthropic) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		msg := ae.Message
		if msg == "" {
			msg = http.StatusText(ae.StatusCode)
		}
		return fmt.Errorf("anthropic at %s: %d: %s", a.Endpoint(), ae.StatusCode, memgraph.ErrorLine(a.scrub(msg)))
	}
	e := wrapCallError("anthropic", a.Endpoint(), ctx, err)
	if a.apiKey != "" && strings.Contains(e.Error(), a.apiKey) {
		return &scrubbedError{msg: a.scrub(e.Error()), err: e}
	}
	return e
}

func (a *Anthropic) scrub(s string) string { return scrubText(s, a.apiKey) }
