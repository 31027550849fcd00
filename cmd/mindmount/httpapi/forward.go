package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
)

// Forwarder is what a front needs of mindmount serve's workers: each
// user's requests are answered by the user's own worker process (running
// as the user), reached through Forward; UserList is for /health.
type Forwarder interface {
	Forward(ctx context.Context, id string) (http.Handler, func(), error)
}

// forward answers every request but /health of a front (Config.Forward):
// it checks the caller's credentials and which user the request acts for
// — a token's user, or for the admin the X-Mindmount-User header, ?userId=
// or the JSON body's userId — and hands the request to that user's worker,
// without the Authorization header: no credential ever reaches a worker.
// A token can only ever reach its own user's worker.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, c caller) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "the request body is larger than 1 MiB")
			return
		}
		writeError(w, http.StatusBadRequest, "the request body could not be read")
		return
	}
	id := requestedUser(r, body)
	if id == "" {
		id = c.user
	}
	if id == "" {
		writeError(w, http.StatusBadRequest, "say which user: userId in the body, ?userId= or the X-Mindmount-User header")
		return
	}
	if !allowed(w, c, id) {
		return
	}
	h, release, err := s.cfg.Forward.Forward(r.Context(), id)
	if err != nil {
		userError(w, err)
		return
	}
	defer release()
	out := r.Clone(r.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.Header.Set("Content-Length", strconv.Itoa(len(body)))
	out.Header.Del("Authorization")
	out.Header.Set("X-Mindmount-User", id)
	h.ServeHTTP(w, out)
}

// requestedUser is the user a request names, wherever it names one.
func requestedUser(r *http.Request, body []byte) string {
	if id := r.Header.Get("X-Mindmount-User"); id != "" {
		return id
	}
	if id := r.URL.Query().Get("userId"); id != "" {
		return id
	}
	var v struct {
		UserID string `json:"userId"`
	}
	if len(bytes.TrimSpace(body)) > 0 && json.Unmarshal(body, &v) == nil {
		return v.UserID
	}
	return ""
}
