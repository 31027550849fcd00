package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

type ollamaMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (s *Server) ollamaChat(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model    string          `json:"model"`
		Messages []ollamaMessage `json:"messages"`
		Stream   *bool           `json:"stream"`
		Format   json.RawMessage `json:"format"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, 400, map[string]any{"error": "invalid request: " + err.Error()})
		return
	}
	var title struct {
		Title string `json:"title"`
	}
	_ = json.Unmarshal(req.Format, &title)
	sys, prompt := split(req.Messages)
	stream := req.Stream == nil || *req.Stream
	c := Call{API: "ollama", Path: r.URL.Path, Kind: kindOf(title.Title, sys), Model: req.Model,
		System: sys, Prompt: prompt, Stream: stream, Schema: req.Format, Body: body, Header: r.Header.Clone()}
	rep := s.next(c)
	if !s.wait(r, rep) || special(w, rep) {
		return
	}
	reason := rep.DoneReason
	if reason == "" {
		reason = "stop"
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	final := map[string]any{
		"model": req.Model, "created_at": now,
		"message": map[string]any{"role": "assistant", "content": ""},
		"done":    true, "done_reason": reason,
		"total_duration": 1000, "load_duration": 10, "prompt_eval_count": len(prompt) / 4,
		"eval_count": len(rep.Content) / 4, "eval_duration": 500,
	}
	if !stream {
		final["message"] = map[string]any{"role": "assistant", "content": rep.Content}
		writeJSON(w, 200, final)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(200)
	enc := json.NewEncoder(w)
	ok := s.streamPieces(w, r, rep, func(piece string) {
		enc.Encode(map[string]any{"model": req.Model, "created_at": now,
			"message": map[string]any{"role": "assistant", "content": piece}, "done": false})
	})
	if !ok || rep.Truncate {
		return
	}
	enc.Encode(final)
}

func split(msgs []ollamaMessage) (system, prompt string) {
	var sys, rest []string
	for _, m := range msgs {
		if m.Role == "system" {
			sys = append(sys, m.Content)
		} else {
			rest = append(rest, m.Content)
		}
	}
	return strings.Join(sys, "\n"), strings.Join(rest, "\n")
}

// pieces splits s into chunks of about n bytes on rune boundaries, as a
// model streams tokens.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		k := n
		if k >= len(s) {
			k = len(s)
		} else {
			for k > 0 && !utf8.RuneStart(s[k]) {
				k--
			}
			if k == 0 {
				k = len(s)
			}
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func (s *Server) ollamaEmbed(w http.ResponseWriter, r *http.Request) {
	model, texts, err := embedRequest(r)
	if err != nil {
		writeJSON(w, 400, map[string]any{"error": "invalid request"})
		return
	}
	vecs := s.embed(texts)
	writeJSON(w, 200, map[string]any{"model": model, "embeddings": vecs, "total_duration": 100, "prompt_eval_count": len(texts)})
}

func (s *Server) embed(texts []string) [][]float32 {
	s.mu.Lock()
	s.embeds = append(s.embeds, append([]string(nil), texts...))
	fn := s.embedFn
	s.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = fn(t)
	}
	return out
}

func (s *Server) ollamaTags(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{"models": []any{map[string]any{
		"name": "fake:latest", "model": "fake:latest", "modified_at": time.Now().UTC().Format(time.RFC3339),
		"size": 1, "digest": "0000", "details": map[string]any{"format": "gguf", "family": "fake"},
	}}})
}
