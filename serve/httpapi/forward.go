package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/mindmount/mindmount/serve/host"
)

// Forwarder is what a front needs of mindmount serve's workers: each
// user's requests are answered by the user's own worker process (running
// as the user), reached through Forward; UserList is for /health.
type Forwarder interface {
	Forward(ctx context.Context, id string) (http.Handler, func(), error)
}

// ForwardedHeader marks a request that one serve node of a cluster passed
// to the user's owner; a Forwarder never passes such a request on again.
const ForwardedHeader = "X-Mindmount-Forwarded"

type hopKey struct{}

// Forwarded reports whether the request a Forwarder is asked about
// (its ctx) came from another node already.
func Forwarded(ctx context.Context) bool {
	v, _ := ctx.Value(hopKey{}).(bool)
	return v
}

// forward answers every request but /health of a front (Config.Forward):
// it checks the caller's credentials and which user the request acts for
// — a token's user, or for the admin the X-Mindmount-User header, ?userId=
// or the JSON body's userId — and hands the request to that user's worker,
// without the Authorization header: no credential ever reaches a worker.
// A token can only ever reach its own user's worker.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, c caller) {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.tooLarge(w)
			return
		}
		writeError(w, http.StatusBadRequest, "the request body could not be read")
		return
	}
	ref, inBody := requestedUser(r, body)
	id := c.user
	if ref != "" || c.admin {
		var err error
		if id, err = s.userID(ref); err != nil {
			badUserID(w, err)
			return
		}
	}
	if id == "" {
		writeError(w, http.StatusBadRequest, "say which user: userId in the body, ?userId= or the X-Mindmount-User header")
		return
	}
	if !allowed(w, c, id) {
		return
	}
	done, ok := s.open.take(w, id)
	if !ok {
		return
	}
	defer done()
	ctx := r.Context()
	if r.Header.Get(ForwardedHeader) != "" {
		ctx = context.WithValue(ctx, hopKey{}, true)
	}
	h, release, err := s.cfg.Forward.Forward(ctx, id)
	if errors.Is(err, host.ErrUnknownUser) && s.cfg.Provision != nil {
		if perr := s.cfg.Provision(r.Context(), id); perr != nil {
			s.logUser(id).Warn("auto-users: cannot provision", "err", perr)
			err = fmt.Errorf("%w: %w", errProvision, perr)
		} else {
			s.logUser(id).Info("auto-users: provisioned")
			h, release, err = s.cfg.Forward.Forward(ctx, id)
		}
	}
	if err != nil {
		s.userError(w, err)
		return
	}
	defer release()
	if inBody && string(ref) != id {
		// The worker knows its user by the ID: a client's "Alice" or 7
		// (auto-users) is said as the ID it maps to.
		body = withUserID(body, id)
	}
	if r.URL.Query().Has("userId") {
		q := r.URL.Query()
		q.Set("userId", id)
		r.URL.RawQuery = q.Encode()
	}
	out := r.Clone(r.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.Header.Set("Content-Length", strconv.Itoa(len(body)))
	out.Header.Del("Authorization")
	out.Header.Set("X-Mindmount-User", id)
	h.ServeHTTP(w, out)
}

// requestedUser is the user a request names, wherever it names one, and
// whether the body named it.
func requestedUser(r *http.Request, body []byte) (UserRef, bool) {
	if id := r.Header.Get("X-Mindmount-User"); id != "" {
		return UserRef(id), false
	}
	if id := r.URL.Query().Get("userId"); id != "" {
		return UserRef(id), false
	}
	var v struct {
		UserID UserRef `json:"userId"`
	}
	if len(bytes.TrimSpace(body)) > 0 && json.Unmarshal(body, &v) == nil && v.UserID != "" {
		return v.UserID, true
	}
	return "", false
}

// withUserID returns the JSON object body with its userId set to id.
func withUserID(body []byte, id string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	m["userId"], _ = json.Marshal(id)
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}
