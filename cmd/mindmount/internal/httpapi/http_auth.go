package httpapi

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
)

// caller is who a request acts as: the admin (any user) or one user.
type caller struct {
	admin bool
	user  string // the token's user when not admin
}

// may reports whether c may act for user id.
func (c caller) may(id string) bool { return c.admin || c.user == id }

// authRequired says whether requests must carry credentials. It only ever
// turns on: at New when an admin key is configured or Config.RequireAuth
// says so, at Serve when the listener is not loopback, and as soon as a
// token exists. Revoking every token never turns it off again — the server
// then refuses everything but /health. Only a loopback server started
// without key or tokens is open (see mindmount serve --http).
func (s *Server) authRequired() bool {
	if s.required.Load() {
		return true
	}
	if s.cfg.Tokens.Any() {
		s.required.Store(true)
		return true
	}
	return false
}

// requireFor makes credentials required on ln unless it is loopback.
func (s *Server) requireFor(ln net.Listener) {
	if !IsLoopback(ln.Addr()) {
		s.required.Store(true)
	}
}

// IsLoopback reports whether a listens on a loopback address only. The
// unspecified address (0.0.0.0, ::) is not loopback: it listens on every
// interface.
func IsLoopback(a net.Addr) bool {
	switch ta := a.(type) {
	case *net.TCPAddr:
		return ta.IP.IsLoopback()
	case *net.UnixAddr:
		return true // reachable through the file system's permissions only
	}
	return false
}

// identify returns the caller of r, or false when its credentials are
// missing or wrong. The key and tokens are never logged or echoed. A
// server that requires no credentials ignores whatever a client sends
// (the reference client sends its Bearer header to every server): the
// header cannot grant more than an open server gives everyone, and
// refusing it would only break that client. Whether credentials are
// required is authRequired's one rule.
func (s *Server) identify(r *http.Request) (caller, bool) {
	if !s.authRequired() {
		return caller{admin: true}, true
	}
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	tok = strings.TrimSpace(tok)
	if !ok || tok == "" {
		return caller{}, false
	}
	if k := s.cfg.AdminKey; k != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(k)) == 1 {
		return caller{admin: true}, true
	}
	if u, ok := s.cfg.Tokens.User(tok); ok {
		return caller{user: u}, true
	}
	return caller{}, false
}

// auth wraps a handler that needs a caller: 401 without valid credentials.
// Whether the caller may act for the request's user is the handler's
// check (allowed), once it has read the user ID.
func (s *Server) auth(h func(w http.ResponseWriter, r *http.Request, c caller)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.identify(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mindmount"`)
			writeError(w, http.StatusUnauthorized, "missing or invalid credentials: send Authorization: Bearer <key or user token>")
			return
		}
		h(w, r, c)
	})
}

// allowed answers 403 when c may not act for user id.
func allowed(w http.ResponseWriter, c caller, id string) bool {
	if c.may(id) {
		return true
	}
	writeError(w, http.StatusForbidden, "this token may not act for that user")
	return false
}

type userKey struct{}

// RequestUser is the user an authorized /mcp request acts for: a token's
// user, or for the admin the X-Mindmount-User header (or ?userId=).
func RequestUser(r *http.Request) string {
	u, _ := r.Context().Value(userKey{}).(string)
	return u
}

// authMCP authorizes /mcp requests and records their user for the MCP
// handler's resolver.
func (s *Server) authMCP(next http.Handler) http.Handler {
	return s.auth(func(w http.ResponseWriter, r *http.Request, c caller) {
		id := c.user
		if c.admin {
			id = r.Header.Get("X-Mindmount-User")
			if id == "" {
				id = r.URL.Query().Get("userId")
			}
		}
		if id == "" {
			writeError(w, http.StatusBadRequest, "say which user: X-Mindmount-User header or ?userId=")
			return
		}
		if !allowed(w, c, id) {
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, id)))
	})
}
