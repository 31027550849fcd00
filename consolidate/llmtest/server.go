// Package llmtest is a fake language-model server for tests. It speaks the
// wire protocols the production clients use — Ollama's /api/chat (streaming
// NDJSON or a single object), /api/embed, /api/tags and /api/version;
// OpenAI's /v1/chat/completions (one object, or server-sent chunks ending
// with "data: [DONE]") and /v1/embeddings; Anthropic's /v1/messages (one
// message, or its server-sent events message_start, content_block_start,
// ping, content_block_delta, content_block_stop, message_delta,
// message_stop) — so tests exercise the real clients end to end. Replies are scripted per test and every request
// is recorded.
package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Call kinds, told apart by the schema name (OpenAI json_schema.name, the
// schema's "title" for Ollama) or a marker in the system prompt.
const (
	KindExtract = "extract"
	KindDecide  = "decide"
	KindOther   = "other"
)

// Call is one recorded chat request.
type Call struct {
	API    string // "ollama", "openai" or "anthropic"
	Path   string
	Kind   string // KindExtract, KindDecide or KindOther
	Model  string
	System string // the system message
	Prompt string // the user message(s), joined
	Stream bool
	Schema json.RawMessage // format (Ollama) or json_schema.schema (OpenAI)
	Body   []byte          // the raw request body
	Header http.Header
}

// Reply is what the server answers to one chat call.
type Reply struct {
	Content string        // the model's text (a JSON document, or garbage)
	Status  int           // HTTP status; 0 means 200
	Error   string        // error message sent with a non-2xx status
	Delay   time.Duration // wait before answering (returns early if the client leaves)
	Hang    bool          // never answer: block until the client gives up
	Raw     string        // sent verbatim instead of a protocol answer (broken wire data)
	// Truncate ends an Ollama stream without its final done chunk.
	Truncate bool
	// DoneReason overrides the final chunk's done_reason ("stop").
	DoneReason string
	// Hold, when set, pauses a streamed answer after its first piece until
	// the channel is closed (or the client leaves): a test can see that the
	// first piece arrived while the model is still "thinking".
	Hold <-chan struct{}
	// Until, when set, holds the whole answer back until the channel is
	// closed (or the client leaves): the test says when the model answers,
	// so "X happened while the model was thinking" needs no clock.
	Until <-chan struct{}
}

// Server is an httptest server with a script.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	calls    []Call
	embeds   [][]string
	queues   map[string][]Reply
	handler  func(Call) Reply
	embedFn  func(text string) []float32
	closed   chan struct{}
	closeOne sync.Once
}

// New starts a server; it is closed when the test ends.
func New(t interface{ Cleanup(func()) }) *Server {
	s := &Server{queues: map[string][]Reply{}, embedFn: HashEmbed, closed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", s.ollamaChat)
	mux.HandleFunc("POST /api/embed", s.ollamaEmbed)
	mux.HandleFunc("GET /api/tags", s.ollamaTags)
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"version": "0.17.4"})
	})
	mux.HandleFunc("POST /v1/chat/completions", s.openaiChat)
	mux.HandleFunc("POST /v1/embeddings", s.openaiEmbed)
	mux.HandleFunc("POST /v1/messages", s.anthropicMessages)
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"object": "list", "data": []any{map[string]any{"id": "fake", "object": "model"}}})
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// OllamaURL is the base for llm.NewOllama; OpenAIURL the base (with
// /v1) for llm.NewOpenAI.
func (s *Server) OllamaURL() string { return s.URL }
func (s *Server) OpenAIURL() string { return s.URL + "/v1" }

// AnthropicURL is the base for llm.NewAnthropic (the SDK adds /v1/messages).
func (s *Server) AnthropicURL() string { return s.URL }

// Close stops the server: later calls get "connection refused". Hanging
// handlers are released first so Close does not wait for them.
func (s *Server) Close() {
	s.closeOne.Do(func() { close(s.closed) })
	s.Server.CloseClientConnections()
	s.Server.Close()
}

// Queue appends replies for calls of kind; they are used in order. A call
// with an empty queue falls back to the handler, then to an empty answer.
func (s *Server) Queue(kind string, replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queues[kind] = append(s.queues[kind], replies...)
}

// Handle scripts every chat call with fn (used when the queue is empty).
func (s *Server) Handle(fn func(Call) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = fn
}

// SetEmbed replaces the embedding function (HashEmbed by default).
func (s *Server) SetEmbed(fn func(string) []float32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedFn = fn
}

// Calls returns the chat requests received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallsOf returns the chat requests of one kind.
func (s *Server) CallsOf(kind string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

// Embeds returns the inputs of every embedding request.
func (s *Server) Embeds() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]string(nil), s.embeds...)
}

// Bodies returns every recorded request body as one string, to check that
// something (a secret) never reached the model.
func (s *Server) Bodies() string {
	var b strings.Builder
	for _, c := range s.Calls() {
		b.Write(c.Body)
		b.WriteByte('\n')
	}
	s.mu.Lock()
	for _, e := range s.embeds {
		b.WriteString(strings.Join(e, "\n"))
	}
	s.mu.Unlock()
	return b.String()
}

func (s *Server) next(c Call) Reply {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	if q := s.queues[c.Kind]; len(q) > 0 {
		s.queues[c.Kind] = q[1:]
		s.mu.Unlock()
		return q[0]
	}
	h := s.handler
	s.mu.Unlock()
	if h != nil {
		return h(c)
	}
	switch c.Kind {
	case KindExtract:
		return Reply{Content: `{"facts":[]}`}
	case KindDecide:
		return Reply{Content: `{"decisions":[]}`}
	}
	return Reply{Content: "{}"}
}

// kindOf tells the extraction call from the decision call.
func kindOf(name, system string) string {
	switch {
	case strings.Contains(name, "extract"):
		return KindExtract
	case strings.Contains(name, "decide"):
		return KindDecide
	case strings.Contains(system, "MINDMOUNT-TASK: extract"):
		return KindExtract
	case strings.Contains(system, "MINDMOUNT-TASK: decide"):
		return KindDecide
	}
	return KindOther
}

// wait applies Until, then Delay/Hang; false means the client went away or the server
// is closing, and nothing should be written.
func (s *Server) wait(r *http.Request, rep Reply) bool {
	if rep.Until != nil {
		select {
		case <-rep.Until:
		case <-r.Context().Done():
			return false
		case <-s.closed:
			return false
		}
	}
	if !rep.Hang && rep.Delay <= 0 {
		return true
	}
	var timer <-chan time.Time
	if !rep.Hang {
		t := time.NewTimer(rep.Delay)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-timer:
		return true
	case <-r.Context().Done():
	case <-s.closed:
	}
	return false
}

// streamPieces writes the pieces of rep.Content with write, flushing after
// each, and honours rep.Hold after the first piece. It returns false when
// the client left or the server is closing.
func (s *Server) streamPieces(w http.ResponseWriter, r *http.Request, rep Reply, write func(piece string)) bool {
	fl, _ := w.(http.Flusher)
	for i, piece := range pieces(rep.Content, 12) {
		write(piece)
		if fl != nil {
			fl.Flush()
		}
		if i == 0 && rep.Hold != nil {
			select {
			case <-rep.Hold:
			case <-r.Context().Done():
				return false
			case <-s.closed:
				return false
			}
		}
	}
	return r.Context().Err() == nil
}

// special writes a status error or raw bytes; true when it answered.
func special(w http.ResponseWriter, rep Reply) bool {
	if rep.Raw != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(statusOr(rep.Status))
		io.WriteString(w, rep.Raw)
		return true
	}
	if rep.Status != 0 && rep.Status/100 != 2 {
		msg := rep.Error
		if msg == "" {
			msg = http.StatusText(rep.Status)
		}
		writeJSON(w, rep.Status, map[string]any{"error": msg})
		return true
	}
	return false
}

func statusOr(s int) int {
	if s == 0 {
		return 200
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// JSON marshals v for a Reply's Content; it panics on values that cannot be
// marshalled, which in a test script is a bug in the test.
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
