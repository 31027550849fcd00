package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/serve/host"
)

// result is the reply of bye and consolidate: what consolidation did.
type result struct {
	Status       string   `json:"status"` // "ok" or "failed"
	Summary      string   `json:"summary"`
	Added        int      `json:"added"`
	Updated      int      `json:"updated"`
	Contradicted int      `json:"contradicted"`
	Unchanged    int      `json:"unchanged"`
	Skipped      int      `json:"skipped"`
	Messages     int      `json:"messages"`
	Commits      []string `json:"commits"`
	Error        string   `json:"error,omitempty"`
}

// bye ends the user's sessions and starts a consolidation of what they
// said. It answers at once, as the reference server does:
// {"status":"bye","consolidated":true} (false when consolidation is off);
// the run is the user's consolidator's own (stoppable with the user's
// runtime). With ?wait=1 or "wait":true it waits and answers what the run
// did (result).
func (s *Server) bye(w http.ResponseWriter, r *http.Request, c caller) {
	var req struct {
		UserID UserRef `json:"userId"`
		Wait   bool    `json:"wait"`
	}
	if !s.decodeBody(w, r, &req) {
		return
	}
	rt, release, id, ok := s.userFor(w, r, c, req.UserID)
	if !ok {
		return
	}
	defer release()
	s.sessions.end(id)
	if req.Wait || waitQuery(r) {
		s.runConsolidation(w, r, rt, id)
		return
	}
	if rt.Consolidator != nil {
		rt.Consolidator.Request()
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "bye", "consolidated": rt.Consolidator != nil})
}

// waitQuery reports ?wait=1 (or true, yes).
func waitQuery(r *http.Request) bool {
	switch strings.ToLower(r.URL.Query().Get("wait")) {
	case "1", "true", "yes":
		return true
	}
	return false
}

// postedMessage is one message of a posted transcript. Content is a
// string or, as in OpenAI's and Anthropic's message formats, a list of
// blocks of which the text ones count.
type postedMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// text is the message's text: a string as it is, the text blocks of a
// list joined by a space (as the reference server reads them), and
// nothing for null or other blocks (images, tool calls).
func (m postedMessage) text() (string, error) {
	c := bytes.TrimSpace(m.Content)
	if len(c) == 0 || bytes.Equal(c, []byte("null")) {
		return "", nil
	}
	if c[0] == '"' {
		var s string
		err := json.Unmarshal(c, &s)
		return s, err
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(c, &blocks); err != nil {
		return "", errors.New("content: want a string or a list of blocks")
	}
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, " "), nil
}

// keptRoles are the roles a posted transcript keeps: those consolidation
// reads (user, assistant) and those it knows to skip (system, tool). Any
// other role a client's history holds (developer, function, ...) is left
// out, as the reference server leaves it out, instead of failing the post.
var keptRoles = map[string]bool{"user": true, "assistant": true, "system": true, "tool": true}

// consolidate writes the posted transcript into the user's inbox and
// starts its consolidation, answering at once as the reference server
// does: {"status":"consolidating","user_id":…,"messages":N}, or
// {"status":"empty"} when there is nothing to consolidate. ?wait=1 or
// "wait":true waits and answers what the run did.
func (s *Server) consolidate(w http.ResponseWriter, r *http.Request, c caller) {
	var req struct {
		UserID     UserRef         `json:"userId"`
		Transcript []postedMessage `json:"transcript"`
		Wait       bool            `json:"wait"`
	}
	if !s.decodeBody(w, r, &req) {
		return
	}
	lines := make([]consolidate.Line, 0, len(req.Transcript))
	for i, m := range req.Transcript {
		text, err := m.text()
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("transcript[%d].%s", i, err))
			return
		}
		if !keptRoles[m.Role] || strings.TrimSpace(text) == "" {
			continue
		}
		lines = append(lines, consolidate.Line{Role: consolidate.Role(m.Role), Content: text})
	}
	rt, release, id, ok := s.userFor(w, r, c, req.UserID)
	if !ok {
		return
	}
	defer release()
	if len(lines) == 0 {
		writeJSON(w, http.StatusOK, map[string]string{"status": "empty"})
		return
	}
	if rt.Consolidator == nil {
		writeError(w, http.StatusServiceUnavailable, "consolidation is off for this daemon (no model configured)")
		return
	}
	now := s.cfg.Now()
	rel := path.Join(TranscriptDir, postedName(now))
	if !roomFor(w, rt, rel, transcriptSize(lines)) {
		return
	}
	if err := consolidate.AppendTranscript(rt.Dir, rel, lines...); err != nil {
		s.logUser(id).Error("posted transcript", "transcript", rel, "err", err)
		transcriptError(w, err)
		return
	}
	s.logUser(id).Info("transcript posted", "transcript", rel, "messages", len(lines))
	if req.Wait || waitQuery(r) {
		s.runConsolidation(w, r, rt, id)
		return
	}
	rt.Consolidator.Request()
	writeJSON(w, http.StatusOK, map[string]any{"status": "consolidating", "user_id": string(req.UserID), "messages": len(req.Transcript)})
}

// transcriptSize is about what lines take in a transcript (the text; the
// JSON around it is small).
func transcriptSize(lines []consolidate.Line) int {
	n := 0
	for _, l := range lines {
		n += len(l.Content) + 64
	}
	return n
}

// runConsolidation consolidates the user's new transcripts now and answers
// with what it did. Runs of one repository are serialised by the
// consolidator itself (with its own loop, too).
func (s *Server) runConsolidation(w http.ResponseWriter, r *http.Request, rt *host.Runtime, user string) {
	if rt.Consolidator == nil {
		writeError(w, http.StatusServiceUnavailable, "consolidation is off for this daemon (no model configured)")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), handlerTimeout)
	defer cancel()
	rep, err := rt.Consolidator.Run(ctx)
	res := result{Status: "ok", Summary: rep.String(), Added: rep.Added, Updated: rep.Updated, Contradicted: rep.Contradicted,
		Unchanged: rep.Unchanged, Skipped: rep.Skipped, Messages: rep.Messages, Commits: append([]string{}, rep.Commits...)}
	if err != nil {
		// The error can quote the model's answer: the reply says what
		// kind of failure it was; the details are in the daemon's log and
		// the user's .mindmount/status (both redacted).
		s.logUser(user).Warn("consolidation failed", "why", consolidationMessage(err))
		res.Status, res.Error = "failed", "consolidation failed: "+consolidationMessage(err)
		writeJSON(w, consolidationStatus(err), res)
		return
	}
	s.logUser(user).Info("consolidated", "summary", rep.String())
	writeJSON(w, http.StatusOK, res)
}

func consolidationMessage(err error) string {
	if errors.Is(err, tracker.ErrTreeFull) {
		return "the memory tree is at its size limit (tree_limit_mib in the operator's configuration); nothing was merged, delete something to make room"
	}
	if errors.Is(err, consolidate.ErrNoProvider) {
		return "no language model is configured (MINDMOUNT_LLM)"
	}
	msg := modelMessage(err)
	if msg == "the model call failed" {
		return "see the daemon's log and .mindmount/status; nothing was changed for the failed part"
	}
	return msg
}

func consolidationStatus(err error) int {
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusGatewayTimeout
	}
	if errors.Is(err, consolidate.ErrNoProvider) {
		return http.StatusServiceUnavailable
	}
	if errors.Is(err, tracker.ErrTreeFull) {
		return http.StatusInsufficientStorage
	}
	return modelStatus(err)
}

// postedName names a posted transcript: its day and 12 random hex digits.
// Never a long run of digits (it was the time in nanoseconds): the name
// reaches each memory's source line, where 19 digits that happen to pass
// the Luhn check are a card number to the secret scanner, which then
// refused the memory (about one post in ten).
func postedName(now time.Time) string {
	var b [6]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-posted-%s.jsonl", now.UTC().Format("2006-01-02"), hex.EncodeToString(b[:]))
}
