package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/mindmount/mindmount/cmd/mindmount/host"
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

// bye ends the user's sessions and consolidates now.
func (s *Server) bye(w http.ResponseWriter, r *http.Request, c caller) {
	var req struct {
		UserID string `json:"userId"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	rt, release, ok := s.userFor(w, r, c, req.UserID)
	if !ok {
		return
	}
	defer release()
	s.sessions.end(req.UserID)
	s.runConsolidation(w, r, rt, req.UserID)
}

type postedMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// consolidate writes the posted transcript into the user's inbox and
// consolidates it.
func (s *Server) consolidate(w http.ResponseWriter, r *http.Request, c caller) {
	var req struct {
		UserID     string          `json:"userId"`
		Transcript []postedMessage `json:"transcript"`
	}
	if !decodeBody(w, r, &req) {
		return
	}
	if len(req.Transcript) == 0 {
		writeError(w, http.StatusBadRequest, "transcript is empty")
		return
	}
	lines := make([]line, 0, len(req.Transcript))
	for i, m := range req.Transcript {
		switch m.Role {
		case "user", "assistant", "system":
		default:
			writeError(w, http.StatusBadRequest, fmt.Sprintf("transcript[%d].role: want user, assistant or system", i))
			return
		}
		lines = append(lines, line{Role: m.Role, Content: m.Content})
	}
	rt, release, ok := s.userFor(w, r, c, req.UserID)
	if !ok {
		return
	}
	defer release()
	now := s.cfg.Now()
	rel := path.Join(TranscriptDir, fmt.Sprintf("%s-posted-%d.jsonl", now.UTC().Format("2006-01-02"), now.UnixNano()))
	if err := appendLines(rt.Dir, rel, lines...); err != nil {
		s.log.Error("posted transcript", "user", req.UserID, "transcript", rel, "err", err)
		transcriptError(w, err)
		return
	}
	s.log.Info("transcript posted", "user", req.UserID, "transcript", rel, "messages", len(lines))
	s.runConsolidation(w, r, rt, req.UserID)
}

// userFor checks the user ID and the caller's right to it, and acquires
// the user; it answers the error itself.
func (s *Server) userFor(w http.ResponseWriter, r *http.Request, c caller, id string) (*host.Runtime, func(), bool) {
	if err := host.ValidID(id); err != nil {
		writeError(w, http.StatusBadRequest, "userId: "+err.Error())
		return nil, nil, false
	}
	if !allowed(w, c, id) {
		return nil, nil, false
	}
	rt, release, err := s.cfg.Users.Acquire(r.Context(), id)
	if err != nil {
		userError(w, err)
		return nil, nil, false
	}
	return rt, release, true
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
		s.log.Warn("consolidation failed", "user", user, "why", consolidationMessage(err))
		res.Status, res.Error = "failed", "consolidation failed: "+consolidationMessage(err)
		writeJSON(w, consolidationStatus(err), res)
		return
	}
	s.log.Info("consolidated", "user", user, "summary", rep.String())
	writeJSON(w, http.StatusOK, res)
}

func consolidationMessage(err error) string {
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
	if strings.Contains(err.Error(), "no language model") {
		return http.StatusServiceUnavailable
	}
	return modelStatus(err)
}
