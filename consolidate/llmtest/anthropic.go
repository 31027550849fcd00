package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// anthropicContent is a message's content: a string or a list of blocks.
type anthropicContent string

func (c *anthropicContent) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = anthropicContent(s)
		return nil
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &blocks); err != nil {
		return err
	}
	var parts []string
	for _, bl := range blocks {
		if bl.Type == "text" {
			parts = append(parts, bl.Text)
		}
	}
	*c = anthropicContent(strings.Join(parts, "\n"))
	return nil
}

// anthropicRequest is the part of a Messages API request the fake reads.
type anthropicRequest struct {
	Model     string           `json:"model"`
	MaxTokens int              `json:"max_tokens"`
	System    anthropicContent `json:"system"`
	Messages  []struct {
		Role    string           `json:"role"`
		Content anthropicContent `json:"content"`
	} `json:"messages"`
	Stream       bool `json:"stream"`
	OutputConfig struct {
		Format struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	} `json:"output_config"`
}

// call records the request as the Call a script answers.
func (req *anthropicRequest) call(r *http.Request, body []byte) Call {
	var prompt []string
	for _, m := range req.Messages {
		prompt = append(prompt, string(m.Content))
	}
	var title struct {
		Title string `json:"title"`
	}
	_ = json.Unmarshal(req.OutputConfig.Format.Schema, &title)
	return Call{API: "anthropic", Path: r.URL.Path, Kind: kindOf(title.Title, string(req.System)), Model: req.Model,
		System: string(req.System), Prompt: strings.Join(prompt, "\n"), Stream: req.Stream,
		Schema: req.OutputConfig.Format.Schema, Body: body, Header: r.Header.Clone()}
}

// anthropicMessages answers POST /v1/messages with the script's next
// reply, whole or as the API's server-sent events.
func (s *Server) anthropicMessages(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req anthropicRequest
	if err := json.Unmarshal(body, &req); err != nil || req.MaxTokens <= 0 || req.Model == "" {
		msg := "max_tokens and model are required"
		if err != nil {
			msg = "invalid request: " + err.Error()
		}
		anthropicError(w, 400, msg)
		return
	}
	c := req.call(r, body)
	rep := s.next(c)
	if !s.wait(r, rep) {
		return
	}
	if rep.Raw == "" && rep.Status != 0 && rep.Status/100 != 2 {
		anthropicError(w, rep.Status, rep.Error)
		return
	}
	if special(w, rep) {
		return
	}
	stop := rep.DoneReason
	switch stop {
	case "":
		stop = "end_turn"
	case "length":
		stop = "max_tokens"
	}
	id := fmt.Sprintf("msg_%d", len(s.Calls()))
	if !req.Stream {
		usage := map[string]any{"input_tokens": len(c.Prompt) / 4, "output_tokens": len(rep.Content) / 4}
		writeJSON(w, 200, map[string]any{"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content":     []any{map[string]any{"type": "text", "text": rep.Content}},
			"stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	s.anthropicStream(w, r, rep, id, req.Model, stop, len(c.Prompt)/4)
}

// anthropicStream sends a reply as the Messages API's events; a reply
// cut short (or Truncate) ends without message_stop.
func (s *Server) anthropicStream(w http.ResponseWriter, r *http.Request, rep Reply, id, model, stop string, inTokens int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	event := func(name string, v map[string]any) {
		v["type"] = name
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	event("message_start", map[string]any{"message": map[string]any{"id": id, "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": inTokens, "output_tokens": 1}}})
	event("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
	event("ping", map[string]any{})
	ok := s.streamPieces(w, r, rep, func(piece string) {
		event("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": piece}})
	})
	if !ok || rep.Truncate {
		return
	}
	event("content_block_stop", map[string]any{"index": 0})
	event("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": len(rep.Content) / 4}})
	event("message_stop", map[string]any{})
}

// anthropicError answers as the Messages API does on failure.
func anthropicError(w http.ResponseWriter, status int, msg string) {
	if msg == "" {
		msg = http.StatusText(status)
	}
	typ := "api_error"
	switch status {
	case 400:
		typ = "invalid_request_error"
	case 401:
		typ = "authentication_error"
	case 429:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	}
	writeJSON(w, status, map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}
