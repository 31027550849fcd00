package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

func (s *Server) openaiChat(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model          string          `json:"model"`
		Messages       []ollamaMessage `json:"messages"`
		Stream         bool            `json:"stream"`
		ResponseFormat struct {
			Type       string `json:"type"`
			JSONSchema struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict bool            `json:"strict"`
			} `json:"json_schema"`
		} `json:"response_format"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "invalid request: " + err.Error(), "type": "invalid_request_error"}})
		return
	}
	sys, prompt := split(req.Messages)
	c := Call{API: "openai", Path: r.URL.Path, Kind: kindOf(req.ResponseFormat.JSONSchema.Name, sys), Model: req.Model,
		System: sys, Prompt: prompt, Stream: req.Stream, Schema: req.ResponseFormat.JSONSchema.Schema, Body: body, Header: r.Header.Clone()}
	rep := s.next(c)
	if !s.wait(r, rep) {
		return
	}
	if rep.Raw == "" && rep.Status != 0 && rep.Status/100 != 2 {
		msg := rep.Error
		if msg == "" {
			msg = http.StatusText(rep.Status)
		}
		writeJSON(w, rep.Status, map[string]any{"error": map[string]any{"message": msg, "type": "server_error"}})
		return
	}
	if special(w, rep) {
		return
	}
	finish := rep.DoneReason
	if finish == "" {
		finish = "stop"
	}
	id := fmt.Sprintf("chatcmpl-%d", len(s.Calls()))
	if req.Stream {
		s.openaiStream(w, r, req.Model, id, finish, rep)
		return
	}
	writeJSON(w, 200, map[string]any{
		"id": id, "object": "chat.completion",
		"created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": rep.Content, "refusal": nil},
			"finish_reason": finish,
		}},
		"usage": map[string]any{"prompt_tokens": len(prompt) / 4, "completion_tokens": len(rep.Content) / 4, "total_tokens": (len(prompt) + len(rep.Content)) / 4},
	})
}

func (s *Server) openaiEmbed(w http.ResponseWriter, r *http.Request) {
	model, texts, err := embedRequest(r)
	if err != nil {
		writeJSON(w, 400, map[string]any{"error": map[string]any{"message": "invalid request"}})
		return
	}
	vecs := s.embed(texts)
	data := make([]any, len(vecs))
	for i, v := range vecs {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": data, "model": model,
		"usage": map[string]any{"prompt_tokens": len(texts), "total_tokens": len(texts)}})
}

// openaiStream answers as OpenAI streams: "data: <chunk>" events whose
// choices carry a delta, a last chunk with finish_reason, then
// "data: [DONE]".
func (s *Server) openaiStream(w http.ResponseWriter, r *http.Request, model, id, finish string, rep Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	chunk := func(delta map[string]any, finish any) {
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil)
	ok := s.streamPieces(w, r, rep, func(piece string) { chunk(map[string]any{"content": piece}, nil) })
	if !ok || rep.Truncate {
		return
	}
	chunk(map[string]any{}, finish)
	io.WriteString(w, "data: [DONE]\n\n")
}
