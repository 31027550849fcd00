package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// CORS: the reference server allowed every origin on every answer; we
// allow only the origins the operator names (serve --cors), and none by
// default, so that a web page a user visits cannot talk to the daemon in
// the user's name.

// corsMethods and corsHeaders are what a preflight allows.
const (
	corsMethods = "GET, POST, OPTIONS"
	corsHeaders = "Authorization, Content-Type, Accept, X-Mindmount-User, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID"
)

// CheckOrigin checks one --cors value: "*" or an origin, scheme://host
// with an optional port and nothing else.
func CheckOrigin(o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("--cors %q: %w", o, errBadOrigin)
	}
	return nil
}

var errBadOrigin = errors.New("want an origin such as https://app.example.com or http://localhost:3000 (scheme, host, optional port), or *")

// corsOrigin is the value of Access-Control-Allow-Origin for a request
// from origin, "" when the origin is not allowed.
func (s *Server) corsOrigin(origin string) string {
	if origin == "" || len(s.cfg.CORS) == 0 {
		return ""
	}
	if slices.Contains(s.cfg.CORS, "*") {
		return "*"
	}
	for _, o := range s.cfg.CORS {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return origin
		}
	}
	return ""
}

// cors sets the CORS headers of an answer to an allowed origin and answers
// a preflight itself; it reports whether the request is answered. A
// preflight carries no credentials, so it is answered before auth.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) bool {
	if len(s.cfg.CORS) == 0 {
		return false
	}
	origin := r.Header.Get("Origin")
	allow := s.corsOrigin(origin)
	h := w.Header()
	h.Add("Vary", "Origin")
	if allow != "" {
		h.Set("Access-Control-Allow-Origin", allow)
	}
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	if allow == "" {
		writeError(w, http.StatusForbidden, "this origin is not allowed (mindmount serve --cors)")
		return true
	}
	h.Set("Access-Control-Allow-Methods", corsMethods)
	h.Set("Access-Control-Allow-Headers", corsHeaders)
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}
