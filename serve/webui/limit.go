package webui

import (
	"context"
	"net/http"
)

// Limit counts a request of a user's pages among that user's open
// requests (serve's front: httpapi's per-user cap, which the user's API
// calls and MCP streams share). It answers the request itself (429) and
// returns false when the user has as many open as they may; done ends
// the request's count.
type Limit func(w http.ResponseWriter, user string) (done func(), ok bool)

type limitKey struct{}

// WithLimit gives the page, for one request, the front's per-user cap:
// the front knows the caps, only the page knows whose pages a session
// opens.
func WithLimit(ctx context.Context, l Limit) context.Context {
	return context.WithValue(ctx, limitKey{}, l)
}

// hold counts r's request against user with the Limit of its context,
// if any.
func hold(w http.ResponseWriter, r *http.Request, user string) (done func(), ok bool) {
	l, _ := r.Context().Value(limitKey{}).(Limit)
	if l == nil {
		return func() {}, true
	}
	return l(w, user)
}
