package httpapi

import (
	"fmt"
	"net/http"
	"strings"
)

// Scope is what a credential may do, a set of three rights:
//
//	read    see memories, recall, status, the review queue, the web page
//	write   change memories, chat (its transcript), consolidate, sync
//	review  approve or reject a consolidation's dream (implies read)
//
// A new token gets DefaultScope, what an agent needs; the admin key has
// every scope. A token made before tokens had scopes is read and write.
type Scope uint8

const (
	ScopeRead Scope = 1 << iota
	ScopeWrite
	ScopeReview

	// ScopeAll is the admin key's (and an open loopback server's).
	ScopeAll = ScopeRead | ScopeWrite | ScopeReview
	// DefaultScope is a new token's: an agent reads and writes, and
	// cannot approve its own dreams.
	DefaultScope = ScopeRead | ScopeWrite
)

var scopeNames = []struct {
	s    Scope
	name string
}{{ScopeRead, "read"}, {ScopeWrite, "write"}, {ScopeReview, "review"}}

// ParseScope reads a comma-separated list of scope names ("read,write").
// review brings read with it: a reviewer sees what they approve.
func ParseScope(list string) (Scope, error) {
	var s Scope
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		one, ok := scopeNamed(f)
		if !ok {
			return 0, fmt.Errorf("unknown scope %q: the scopes are read, write and review", f)
		}
		s |= one
	}
	if s == 0 {
		return 0, fmt.Errorf("no scope given: name one or more of read, write and review")
	}
	return s.withImplied(), nil
}

// withImplied adds what a scope brings along: review brings read.
func (s Scope) withImplied() Scope {
	if s.Has(ScopeReview) {
		s |= ScopeRead
	}
	return s
}

func scopeNamed(name string) (Scope, bool) {
	for _, n := range scopeNames {
		if n.name == name {
			return n.s, true
		}
	}
	return 0, false
}

// scopeOf is the scope a token file's entry names; an entry without one
// (made before scopes) is read and write, and a name this version does
// not know grants nothing.
func scopeOf(names []string) Scope {
	if names == nil {
		return DefaultScope
	}
	var s Scope
	for _, n := range names {
		one, _ := scopeNamed(n)
		s |= one
	}
	return s.withImplied()
}

// Names lists the scope's names, in the order read, write, review.
func (s Scope) Names() []string {
	out := []string{}
	for _, n := range scopeNames {
		if s.Has(n.s) {
			out = append(out, n.name)
		}
	}
	return out
}

func (s Scope) String() string { return strings.Join(s.Names(), ",") }

// Has reports whether s includes every right of x.
func (s Scope) Has(x Scope) bool { return s&x == x }

// ScopeHeader carries the caller's scope from serve's front to the user's
// worker, which may narrow what it does by it (MCP's writing tools) and
// never widen it: the front always overwrites it.
const ScopeHeader = "X-Mindmount-Scope"

// ScopeFromHeader is the scope h's ScopeHeader names, and whether it
// names one; an MCP tool call asks it (through the request's header)
// whether it may write.
func ScopeFromHeader(h http.Header) (Scope, bool) {
	v, ok := h[http.CanonicalHeaderKey(ScopeHeader)]
	if !ok || len(v) == 0 {
		return 0, false
	}
	var s Scope
	for _, f := range strings.Split(v[0], ",") {
		one, _ := scopeNamed(strings.TrimSpace(f))
		s |= one
	}
	return s, true
}

// neededScope is what a request of the API needs: approving or rejecting
// a dream needs review; any other request that is not a read (GET, HEAD)
// needs write; MCP's reads and writes share POST, so /mcp needs read here
// and its writing tools ask for write themselves (ScopeFromHeader).
func neededScope(r *http.Request) Scope {
	if isReviewAction(r) {
		return ScopeReview
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return ScopeRead
	}
	if r.URL.Path == "/mcp" || strings.HasPrefix(r.URL.Path, "/mcp/") {
		return ScopeRead
	}
	return ScopeWrite
}

// isReviewAction reports whether r approves or rejects a dream
// (POST /v1/review/{n}/approve or /reject). The path is read both as
// sent and decoded, so no escaping (%2F in {n}, %61pprove) makes an
// approval look like something else.
func isReviewAction(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	for _, p := range []string{r.URL.Path, r.URL.EscapedPath()} {
		if strings.HasPrefix(p, "/v1/review/") && (strings.HasSuffix(p, "/approve") || strings.HasSuffix(p, "/reject")) {
			return true
		}
	}
	return false
}
