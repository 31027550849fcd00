package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
	"github.com/mindmount/mindmount/serve/host"
)

type chatRequest struct {
	UserID    UserRef `json:"userId"`
	Message   string  `json:"message"`
	SessionID string  `json:"sessionId"`
}

// cutNote ends the transcript line of an answer the client did not get
// whole, so that a reader of the transcript (and consolidation) knows.
const cutNote = "[answer cut off: the client disconnected before the end]"

// writeTimeout bounds one write to a chat client: a client that stops
// reading loses its stream instead of holding a model slot.
const writeTimeout = 30 * time.Second

// chat streams the model's answer to one message, with the user's
// compiled memory and the memories recalled for the message as the system
// prompt, in OpenAI's chunk format, and keeps both in the transcript.
func (s *Server) chat(w http.ResponseWriter, r *http.Request, c caller) {
	var req chatRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Message) == "" {
		writeError(w, http.StatusBadRequest, "message is empty")
		return
	}
	if err := validSession(req.SessionID); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if s.cfg.Pool == nil {
		writeError(w, http.StatusServiceUnavailable, "no language model is configured (MINDMOUNT_LLM)")
		return
	}
	rt, release, user, ok := s.userFor(w, r, c, req.UserID)
	if !ok {
		return
	}
	defer release()
	sid := req.SessionID
	if sid == "" {
		sid = "default"
	}
	now := s.cfg.Now()
	sess := s.sessions.get(user, sid, now)
	if err := sess.acquire(r.Context()); err != nil {
		return // the client left while waiting for its own session
	}
	defer sess.release()

	if !s.readyTranscript(w, rt, user, sess.rel, len(req.Message)) {
		return
	}
	msgs := make([]llm.Message, 0, len(sess.msgs)+2)
	msgs = append(msgs, llm.Message{Role: "system", Content: s.systemPrompt(r.Context(), rt.Graph, req.Message)})
	hist := sess.msgs
	if len(hist) > s.cfg.History {
		hist = hist[len(hist)-s.cfg.History:]
	}
	msgs = append(msgs, hist...)
	msgs = append(msgs, llm.Message{Role: "user", Content: req.Message})

	text, cut := s.streamAnswer(w, r, user, now, msgs)
	s.recordChat(rt, user, sess, req.Message, text, cut, now)
}

// streamAnswer asks the model for user's answer to msgs and streams it to
// w as it comes. It returns the text the model gave and whether the
// answer was cut (the model failed, or the stream to the client broke).
func (s *Server) streamAnswer(w http.ResponseWriter, r *http.Request, user string, now time.Time, msgs []llm.Message) (string, bool) {
	st := &sseWriter{w: w, rc: http.NewResponseController(w), id: fmt.Sprintf("chatcmpl-%d", now.UnixNano()), model: s.cfg.Pool.Provider().Model(), created: now.Unix()}
	var answer strings.Builder
	err := s.cfg.Pool.For(user).Stream(r.Context(), msgs, func(d string) error {
		answer.WriteString(d)
		return st.delta(d)
	})
	cut := err != nil
	switch {
	case err == nil:
		err = st.finish()
		cut = err != nil
	case !st.started && !errors.Is(err, errClientGone) && r.Context().Err() == nil:
		// Nothing sent yet. A full queue or no model keeps its status (a
		// retry may help); a model that failed is told in the stream the
		// reference's clients read (200, an error event), unless the
		// client asked for JSON.
		s.logUser(user).Warn("chat: model call failed", "why", modelMessage(err)) // the error itself may echo the prompt
		if code := modelStatus(err); code != http.StatusBadGateway || wantsJSON(r) {
			writeError(w, code, modelMessage(err))
		} else {
			st.fail(modelMessage(err))
		}
	case r.Context().Err() == nil && !errors.Is(err, errClientGone):
		// Mid-stream: the client is still there, tell it in the stream.
		s.logUser(user).Warn("chat: model stream broke", "why", modelMessage(err))
		st.fail(modelMessage(err))
	}
	return answer.String(), cut
}

// recordChat keeps a chat's question and answer in its session and its
// transcript, for the consolidator; an answer that never came (text empty
// and cut) leaves no trace.
func (s *Server) recordChat(rt *host.Runtime, user string, sess *session, question, text string, cut bool, now time.Time) {
	if text == "" && cut {
		// The model said nothing: a refusal (429, the queue is full), a
		// failed call or a client gone before the first word. Only a
		// conversation that reached the model is recorded, so nothing
		// of this request is kept to be consolidated.
		s.logUser(user).Info("chat not recorded: no answer", "transcript", sess.rel)
		return
	}
	answered := len(text)
	if cut {
		text += "\n" + cutNote
	}
	// Both lines at once, after the answer: a request the model never
	// answered leaves no trace.
	if err := consolidate.AppendTranscriptNoSync(rt.Dir, sess.rel,
		consolidate.Line{Role: consolidate.RoleUser, Content: question, Time: now.UTC().Format(time.RFC3339)},
		consolidate.Line{Role: consolidate.RoleAssistant, Content: text, Time: s.cfg.Now().UTC().Format(time.RFC3339), Cut: cut}); err != nil {
		s.logUser(user).Error("chat transcript", "transcript", sess.rel, "err", err)
	}
	sess.msgs = append(sess.msgs, llm.Message{Role: "user", Content: question}, llm.Message{Role: "assistant", Content: text})
	// The tracker hears of the transcript (fsnotify's report of the same
	// write joins it) and tells the consolidator once.
	rt.Tracker.Touch(sess.rel, chatWriter)
	s.logUser(user).Info("chat", "transcript", sess.rel, "answer_bytes", answered, "cut", cut)
}

// readyTranscript checks a chat's transcript before the model is asked:
// its folder is made (never through a link) and the tree has room for
// it (507 otherwise). A chat that cannot be recorded is refused, and one
// the model never answered leaves no trace. It answers the refusal itself.
func (s *Server) readyTranscript(w http.ResponseWriter, rt *host.Runtime, user, rel string, msgLen int) bool {
	if err := prepareTranscript(rt.Dir, rel); err != nil {
		s.logUser(user).Error("chat transcript", "transcript", rel, "err", err)
		transcriptError(w, err)
		return false
	}
	return roomFor(w, rt, rel, msgLen+128)
}

// chatWriter is the writer /v1/chat's transcript lines are touched as.
const chatWriter = "http"

// validSession checks a client's session ID: printable, at most 128 bytes.
func validSession(id string) error {
	if len(id) > 128 {
		return errors.New("sessionId is longer than 128 bytes")
	}
	for _, r := range id {
		if memgraph.IsControl(r) {
			return errors.New("sessionId has control characters")
		}
	}
	return nil
}

// modelMessage says what went wrong with the model without quoting it: a
// model's error text may echo the prompt, which holds memories.
func modelMessage(err error) string {
	switch {
	case errors.Is(err, llm.ErrBusy):
		return "the model queue is full; try again shortly"
	case errors.Is(err, llm.ErrNoModel):
		return "no model answers; " + llm.NoModelHelp
	case errors.Is(err, context.DeadlineExceeded):
		return "the model did not answer in time"
	case errors.Is(err, llm.ErrStreamCut):
		return "the model's answer broke off"
	}
	return "the model call failed"
}

// Marks around the recalled memories in the system prompt (README: "How
// memories reach the model").
const (
	recalledOpen  = "<recalled-memories>"
	recalledClose = "</recalled-memories>"
)

// systemPrompt is the compiled CONTEXT.md and, marked, the memories recall
// finds for the message.
func (s *Server) systemPrompt(ctx context.Context, g *memgraph.Graph, message string) string {
	var b strings.Builder
	b.Write(g.Context(memgraph.ContextOptions{}))
	hits, _ := g.RecallScoped(ctx, message, recall.Options{K: s.cfg.RecallK}, memgraph.ScopeAll)
	if len(hits) == 0 {
		return b.String()
	}
	b.WriteString("\n\n" + recalledOpen + "\n")
	b.WriteString("Memories recalled for the user's latest message, best match first (they may not all be relevant):\n")
	b.WriteString(memgraph.RecallLines(hits))
	b.WriteString(recalledClose + "\n")
	return b.String()
}

// errClientGone means a write to the chat client failed.
var errClientGone = errors.New("the client is gone")

// sseWriter writes OpenAI chat.completion.chunk events. Headers go out
// with the first delta, so an error before any answer is still a JSON
// error with its status.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	id      string
	model   string
	created int64
	started bool
}

func (s *sseWriter) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

func (s *sseWriter) event(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.raw("data: " + string(b) + "\n\n")
}

func (s *sseWriter) raw(data string) error {
	s.start()
	s.rc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := s.w.Write([]byte(data)); err != nil {
		return errClientGone
	}
	if err := s.rc.Flush(); err != nil {
		return errClientGone
	}
	return nil
}

func (s *sseWriter) chunk(delta map[string]any, finish any) map[string]any {
	return map[string]any{"id": s.id, "object": "chat.completion.chunk", "created": s.created, "model": s.model,
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
}

func (s *sseWriter) delta(d string) error {
	if !s.started {
		if err := s.event(s.chunk(map[string]any{"role": "assistant", "content": ""}, nil)); err != nil {
			return err
		}
	}
	return s.event(s.chunk(map[string]any{"content": d}, nil))
}

// finish ends a complete answer: a chunk with finish_reason, then [DONE].
// Its delta carries an empty content, so a client reading
// delta["content"] on every chunk (as the reference's do) never fails.
func (s *sseWriter) finish() error {
	if err := s.event(s.chunk(map[string]any{"content": ""}, "stop")); err != nil {
		return err
	}
	return s.raw("data: [DONE]\n\n")
}

// fail ends a broken answer with an error event, then [DONE]. The event
// is the reference server's: {"error": "what went wrong"}.
func (s *sseWriter) fail(msg string) {
	if s.event(map[string]any{"error": msg}) == nil {
		s.raw("data: [DONE]\n\n")
	}
}

// wantsJSON reports whether the client asked for a JSON answer (Accept:
// application/json) rather than the stream.
func wantsJSON(r *http.Request) bool {
	a := r.Header.Get("Accept")
	return strings.Contains(a, "application/json") && !strings.Contains(a, "text/event-stream")
}
