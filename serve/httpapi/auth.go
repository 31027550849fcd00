package httpapi

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/mindmount/mindmount/serve/webui"
)

// caller is who a request acts as: the admin (any user) or one user, with
// what it may do.
type caller struct {
	admin   bool
	user    string // the token's user when not admin
	scope   Scope
	tokenID string // the token's ID when a token said who it is
}

// may reports whether c may act for user id.
func (c caller) may(id string) bool { return c.admin || c.user == id }

// Auth is the one authentication decision of serve's fronts: the API,
// MCP over HTTP and the web page's login all ask Check. Whether
// credentials are required is a latch that only ever turns on: at
// NewAuth when an admin key is configured or the caller says so, at
// RequireFor when a listener is not loopback, and as soon as a token
// exists (or the token file cannot be read: it may hold some). Revoking
// every token never turns it off again — the server then refuses
// everything but /health. Only a loopback server started without key or
// tokens is open, to its loopback clients.
type Auth struct {
	key      string
	tokens   *TokenStore
	required atomic.Bool
}

// NewAuth returns the decision for the admin key (none: "") and the token
// store (nil: none); require makes credentials required from the start.
func NewAuth(key string, tokens *TokenStore, require bool) *Auth {
	a := &Auth{key: key, tokens: tokens}
	a.required.Store(require || key != "")
	a.Required() // a token that exists at start latches it now
	return a
}

// RequireFor makes credentials required for good unless addr is
// loopback. Every front calls it with its listener's address before it
// serves.
func (a *Auth) RequireFor(addr net.Addr) {
	if !IsLoopback(addr) {
		a.required.Store(true)
	}
}

// Required reports whether requests must carry credentials.
func (a *Auth) Required() bool {
	if a.required.Load() {
		return true
	}
	if a.tokens.Any() {
		a.required.Store(true)
		return true
	}
	return false
}

// Check says who the credential tok (a user token or the admin key)
// acts as, or false when it is missing or wrong. The key and tokens are
// never logged or echoed. A server that requires no credentials takes
// whatever a client sends as the admin: the reference client sends its
// Bearer header to every server, and on an open server it cannot grant
// more than everyone has.
func (a *Auth) Check(tok string) (caller, bool) {
	if !a.Required() {
		return caller{admin: true, scope: ScopeAll}, true
	}
	tok = strings.TrimSpace(tok)
	if tok == "" {
		return caller{}, false
	}
	if a.key != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(a.key)) == 1 {
		return caller{admin: true, scope: ScopeAll}, true
	}
	if e, ok := a.tokens.lookup(tok); ok {
		return caller{user: e.User, scope: scopeOf(e.Scopes), tokenID: e.ID}, true
	}
	return caller{}, false
}

// Login is Check for the web page's login form (webui.Config.Verify).
// The grant stays bound to its credential: its Still says no as soon as
// a token is revoked, its user removed or its scopes changed, or — for a
// login to a server that required no credentials — as soon as it does,
// so the page's session ends with the credential it was made from.
func (a *Auth) Login(tok string) (webui.Grant, bool) {
	c, ok := a.Check(tok)
	if !ok {
		return webui.Grant{}, false
	}
	g := grantOf(c)
	switch {
	case c.tokenID != "":
		id, user, scope := c.tokenID, c.user, c.scope
		g.Still = func() bool {
			e, ok := a.tokens.byID(id)
			return ok && e.User == user && scopeOf(e.Scopes) == scope
		}
	case !a.Required():
		g.Still = func() bool { return !a.Required() }
	}
	// The admin key is the server's for its lifetime: nothing revokes it.
	return g, true
}

func grantOf(c caller) webui.Grant {
	return webui.Grant{User: c.user, Admin: c.admin, Write: c.scope.Has(ScopeWrite), Review: c.scope.Has(ScopeReview)}
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

// identify returns the caller of r (Auth.Check on its Bearer header), or
// false when its credentials are missing or wrong. A caller without
// credentials (an open server, or serve's worker, which only serve's
// front reaches) is narrowed to the scope ScopeHeader names, if any: the
// front's word on what the original caller may do.
func (s *Server) identify(r *http.Request) (caller, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		tok = ""
	}
	c, ok := s.authn.Check(tok)
	if !ok {
		return caller{}, false
	}
	if !s.authn.Required() {
		if sc, named := ScopeFromHeader(r.Header); named {
			c.scope &= sc
		}
	}
	return c, true
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
		if need := neededScope(r); !c.scope.Has(need) {
			writeError(w, http.StatusForbidden, scopeRefusal(need))
			return
		}
		r.Header.Set(ScopeHeader, c.scope.String())
		h(w, r, c)
	})
}

// scopeRefusal says which scope a request lacked and how to get one.
func scopeRefusal(need Scope) string {
	if need == ScopeReview {
		return "this token may not approve or reject dreams: review needs a token with the review scope (mindmount users token ROOT ID --scope review) or the admin key"
	}
	return "this token lacks the " + need.String() + " scope this request needs (mindmount users token ROOT ID --scope " + need.String() + ")"
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
		done, ok := s.open.take(w, id)
		if !ok {
			return
		}
		defer done()
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, id)))
	})
}
