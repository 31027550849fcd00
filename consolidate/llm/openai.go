package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mindmount/mindmount/memgraph"
)

// OpenAI talks to any OpenAI-compatible server (OpenAI, LM Studio, vLLM,
// llama.cpp server) over plain net/http: two endpoints do not justify an
// SDK dependency.
type OpenAI struct {
	base       string // e.g. https://api.openai.com/v1, without a trailing slash
	apiKey     string // secret: never logged, never in an error
	model      string
	EmbedModel string
	Timeout    time.Duration
	HTTP       *http.Client
	format     atomic.Int32 // formatSchema, then lower if the server refuses it
}

// Structured-output modes, best first.
const (
	formatSchema int32 = iota // response_format json_schema (strict)
	formatObject              // response_format json_object, schema in the prompt
	formatNone                // schema in the prompt only
)

// httpError is a non-2xx answer; its text never holds the API key.
type httpError struct {
	status int
	msg    string
	text   string
}

func (e *httpError) Error() string { return e.text }

func aboutFormat(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "response_format") || strings.Contains(m, "json_schema") || strings.Contains(m, "json_object")
}

var _ Provider = (*OpenAI)(nil)
var _ Endpoint = (*OpenAI)(nil)

// NewOpenAI returns a provider for baseURL ("" means https://api.openai.com/v1;
// the URL is expected to include the /v1 prefix, as OPENAI_BASE_URL does).
func NewOpenAI(baseURL, apiKey, model string) *OpenAI {
	if baseURL == "" {
		baseURL = "https://api.openai.com/v1"
	}
	return &OpenAI{
		base:       strings.TrimRight(baseURL, "/"),
		apiKey:     apiKey,
		model:      model,
		EmbedModel: model,
		Timeout:    DefaultTimeout,
		HTTP:       &http.Client{},
	}
}

func (o *OpenAI) Name() string  { return "openai" }
func (o *OpenAI) Model() string { return o.model }

// Endpoint returns the base URL with any user:password removed.
func (o *OpenAI) Endpoint() string {
	if u, err := url.Parse(o.base); err == nil {
		return u.Redacted()
	}
	return "(invalid OPENAI_BASE_URL)"
}

// Ping lists models, which every compatible server implements.
func (o *OpenAI) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return o.do(ctx, http.MethodGet, "/models", nil, nil)
}

type oaMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type oaChatRequest struct {
	Model          string      `json:"model"`
	Messages       []oaMessage `json:"messages"`
	Temperature    float64     `json:"temperature"`
	Stream         bool        `json:"stream"`
	ResponseFormat any         `json:"response_format,omitempty"`
}

type oaChatResponse struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// Chat asks /chat/completions with response_format json_schema (strict).
func (o *OpenAI) Chat(ctx context.Context, req ChatRequest) (string, error) {
	ctx, cancel := callContext(ctx, o.Timeout)
	defer cancel()
	body := oaChatRequest{
		Model: o.model,
		Messages: []oaMessage{
			{Role: "system", Content: req.System},
			{Role: "user", Content: req.Prompt},
		},
	}
	var resp oaChatResponse
	for {
		mode := o.format.Load()
		body.ResponseFormat = nil
		body.Messages[0].Content = req.System
		if len(req.Schema) > 0 {
			switch mode {
			case formatSchema:
				body.ResponseFormat = map[string]any{
					"type": "json_schema",
					"json_schema": map[string]any{
						"name":   cmp.Or(req.SchemaName, "answer"),
						"schema": strictSubset(req.Schema),
						"strict": true,
					},
				}
			case formatObject:
				body.ResponseFormat = map[string]any{"type": "json_object"}
				body.Messages[0].Content = req.System + "\n\nThe answer must follow this JSON schema:\n" + string(req.Schema)
			default:
				body.Messages[0].Content = req.System + "\n\nThe answer must follow this JSON schema:\n" + string(req.Schema)
			}
		}
		err := o.do(ctx, http.MethodPost, "/chat/completions", body, &resp)
		var he *httpError
		if errors.As(err, &he) && he.status == http.StatusBadRequest && mode < formatNone && aboutFormat(he.msg) {
			// An older server that does not know this response_format:
			// step down (json_object, then the schema in the prompt) and
			// remember, so the next call does not fail first.
			o.format.CompareAndSwap(mode, mode+1)
			continue
		}
		if err != nil {
			return "", err
		}
		break
	}
	if len(resp.Choices) == 0 {
		return "", fmt.Errorf("openai %s: the answer has no choices", o.model)
	}
	c := resp.Choices[0]
	if c.Message.Refusal != nil && *c.Message.Refusal != "" {
		return "", fmt.Errorf("openai %s: the model refused: %s", o.model, memgraph.ClipLine(o.scrub(*c.Message.Refusal), 200))
	}
	if c.FinishReason == "length" {
		return "", fmt.Errorf("openai %s: the answer was cut off by the length limit", o.model)
	}
	if c.Message.Content == nil {
		return "", fmt.Errorf("openai %s: the answer has no content", o.model)
	}
	if len(*c.Message.Content) > MaxAnswerBytes {
		return "", fmt.Errorf("openai %s: the answer exceeds %d bytes", o.model, MaxAnswerBytes)
	}
	return *c.Message.Content, nil
}

// Embed uses /embeddings with a batch of inputs.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	ctx, cancel := callContext(ctx, o.Timeout)
	defer cancel()
	var resp struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := o.do(ctx, http.MethodPost, "/embeddings", map[string]any{"model": o.EmbedModel, "input": texts}, &resp); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(out) {
			return nil, fmt.Errorf("openai %s: embedding index %d out of range", o.EmbedModel, d.Index)
		}
		out[d.Index] = d.Embedding
	}
	for i, v := range out {
		if v == nil {
			return nil, fmt.Errorf("openai %s: no embedding for input %d", o.EmbedModel, i)
		}
	}
	return out, nil
}

func (o *OpenAI) do(ctx context.Context, method, path string, in, out any) error {
	resp, err := o.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return o.scrubErr(wrapCallError("openai", o.Endpoint(), ctx, err))
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("openai at %s: %s %s: the answer is not the expected JSON: %v", o.Endpoint(), method, path, memgraph.ClipLine(err.Error(), 120))
		}
	}
	return nil
}

// send makes one request and returns the response of a 2xx answer, whose
// body the caller closes; any other status is an *httpError.
func (o *OpenAI) send(ctx context.Context, method, path string, in any) (*http.Response, error) {
	var rd io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, o.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("openai: bad base URL %s: %v", o.Endpoint(), o.scrub(err.Error()))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if o.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.apiKey)
	}
	resp, err := o.HTTP.Do(req)
	if err != nil {
		return nil, o.scrubErr(wrapCallError("openai", o.Endpoint(), ctx, err))
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	msg := strings.TrimSpace(string(data))
	if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
		msg = e.Error.Message
	}
	return nil, &httpError{status: resp.StatusCode, msg: o.scrub(msg),
		text: fmt.Sprintf("openai at %s: %s %s: %s", o.Endpoint(), method, path, memgraph.ErrorLine(o.scrub(resp.Status+": "+msg)))}
}

// scrub removes the API key (servers sometimes echo it) and anything else
// that looks like a secret from text bound for an error or a log.
func (o *OpenAI) scrub(s string) string {
	return scrubText(s, o.apiKey)
}

func (o *OpenAI) scrubErr(err error) error {
	if err == nil {
		return nil
	}
	s := err.Error()
	if o.apiKey == "" || !strings.Contains(s, o.apiKey) {
		return err
	}
	return &scrubbedError{msg: o.scrub(s), err: err}
}

// scrubbedError keeps errors.Is working (ErrNoModel, DeadlineExceeded)
// while its text has the key removed. It has no Unwrap on purpose: the
// wrapped error's text still holds the key.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string        { return e.msg }
func (e *scrubbedError) Is(target error) bool { return errors.Is(e.err, target) }

// strictSubset drops schema keywords that OpenAI's strict structured
// outputs reject or ignore ("title", item counts); the name travels in
// json_schema.name and counts are enforced when parsing anyway.
func strictSubset(schema json.RawMessage) json.RawMessage {
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return schema
	}
	var walk func(any)
	walk = func(x any) {
		switch t := x.(type) {
		case map[string]any:
			delete(t, "title")
			delete(t, "maxItems")
			delete(t, "minItems")
			for _, c := range t {
				walk(c)
			}
		case []any:
			for _, c := range t {
				walk(c)
			}
		}
	}
	walk(v)
	b, err := json.Marshal(v)
	if err != nil {
		return schema
	}
	return b
}
