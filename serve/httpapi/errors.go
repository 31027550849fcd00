package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/memgraph/subtree"
	"github.com/mindmount/mindmount/serve/host"
)

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// writeError answers {"error": msg}. msg never holds a key, a token or
// transcript text: callers pass fixed words or errors of our own making.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// userError answers an error from Users.Acquire with its status: a bad ID
// is 400, an unknown user 404 (with what would add it), a user that could
// not be provisioned 503 saying so, anything else (a broken repository,
// the daemon closing) 503.
func (s *Server) userError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, host.ErrBadID):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, host.ErrUnknownUser):
		writeError(w, http.StatusNotFound, err.Error()+": add it with mindmount users add ROOT ID, or start mindmount serve with --auto-users UIDRANGE to add users on first use")
	case errors.Is(err, errProvision):
		writeError(w, http.StatusServiceUnavailable, errProvision.Error()+"; see the server log")
	default:
		writeError(w, http.StatusServiceUnavailable, "the user's memory cannot be served now")
	}
}

// modelStatus is the status of a failed model call: 429 when the queue is
// full, 504 on a timeout, 502 otherwise (the model, not we, failed).
func modelStatus(err error) int {
	switch {
	case errors.Is(err, llm.ErrBusy):
		return http.StatusTooManyRequests
	case errors.Is(err, llm.ErrNoModel):
		return http.StatusServiceUnavailable
	}
	return http.StatusBadGateway
}

// decodeBody reads a JSON body of at most Config.MaxBody bytes into v. It
// answers 413 or 400 itself and returns false then.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.tooLarge(w)
			return false
		}
		writeError(w, http.StatusBadRequest, "the request body is not the expected JSON")
		return false
	}
	return true
}

// transcriptError answers a transcript that cannot be written. A symbolic
// link on its path (planted at transcripts/ or transcripts/http) is the
// user's to remove, so it is named: 409, with the fix. Anything else is
// ours: 500.
func transcriptError(w http.ResponseWriter, err error) {
	if errors.Is(err, subtree.ErrUnsafePath) {
		writeError(w, http.StatusConflict, "the transcript cannot be written: "+TranscriptDir+" or a folder above it is a symbolic link; mindmount never writes through one — replace it with a folder")
		return
	}
	writeError(w, http.StatusInternalServerError, "the transcript cannot be written")
}

// treeFull answers a write the work tree's size limit refused
// (tracker.ErrTreeFull): 507, with the limit and the key that sets it.
func treeFull(w http.ResponseWriter, err error) {
	writeError(w, http.StatusInsufficientStorage, err.Error())
}

// roomFor asks the user's tree for n more bytes at rel and answers 507
// itself when there is none.
func roomFor(w http.ResponseWriter, rt *host.Runtime, rel string, n int) bool {
	if rt.Tracker == nil {
		return true
	}
	if err := rt.Tracker.Room(rel, int64(n)); err != nil {
		treeFull(w, err)
		return false
	}
	return true
}

// tooLarge answers 413 with the limit and the flag that sets it.
func (s *Server) tooLarge(w http.ResponseWriter) {
	writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes, the most this server accepts (serve --max-body)", s.cfg.MaxBody))
}
