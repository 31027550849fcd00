// Package control is a running daemon's control socket: the one way a
// command ("mindmount sync", "mindmount consolidate", "mindmount review
// approve N") asks the daemon that serves a repository to do what only the
// repository's one writer may do. The socket lives in the repository's git
// directory (SocketFile, mode 0600 in a folder of the user's), and the
// daemon answers only a peer of its own uid, the repository owner's or
// root's (SO_PEERCRED): one user never drives another's daemon.
//
// The protocol is one request and one answer per connection, each a line
// of JSON: {"verb":"review approve","n":3} → {"commit":"…"}. A verb is
// served by whoever registered it (Server.Handle): the runtime for
// consolidation and review, the sync loop for sync.
package control

import (
	"encoding/json"
	"errors"

	"github.com/mindmount/mindmount/consolidate"
)

// SocketFile is where a daemon listens, relative to the git directory.
const SocketFile = "mindmount/control.sock"

// Verb is what a request asks for.
type Verb string

// The verbs a daemon serves.
const (
	Sync        Verb = "sync"           // fetch, merge and push now; answers the sync state
	Consolidate Verb = "consolidate"    // run a consolidation now; answers its report
	Approve     Verb = "review approve" // merge waiting dream N; answers the merge commit
	Reject      Verb = "review reject"  // drop waiting dream N (Reason); answers the rejection's commit
)

// Request is one request to a daemon.
type Request struct {
	Verb   Verb   `json:"verb"`
	N      int    `json:"n,omitempty"`      // the dream of review approve and reject
	Tip    string `json:"tip,omitempty"`    // review approve: the dream's tip as it was shown
	Reason string `json:"reason,omitempty"` // review reject: why
}

// Answer is a daemon's answer. Error is empty on success.
type Answer struct {
	Error string `json:"error,omitempty"`
	// Kind names Error's kind (see kinds), so the asking command can
	// tell them apart with errors.Is, as if it had run the verb itself.
	Kind   string          `json:"kind,omitempty"`
	Commit string          `json:"commit,omitempty"` // the commit the verb made
	Data   json.RawMessage `json:"data,omitempty"`   // the verb's own result (sync's state, consolidation's report)
}

// ErrNoDaemon means no daemon answers on the repository's socket: the
// command may do the work itself.
var ErrNoDaemon = errors.New("no daemon serves this repository")

// ErrRefused means the daemon refused the asking process: another user's.
var ErrRefused = errors.New("the daemon refuses requests from another user")

// ErrNotServed means the daemon does not serve the verb (its consolidation
// is off, or it is older than the command).
var ErrNotServed = errors.New("the daemon does not serve this request")

// ErrStopping means the daemon stopped before it answered.
var ErrStopping = errors.New("the daemon is stopping")

// kinds are the errors an answer can carry across the socket by name.
var kinds = map[string]error{
	"no-daemon":      ErrNoDaemon,
	"refused":        ErrRefused,
	"not-served":     ErrNotServed,
	"stopping":       ErrStopping,
	"no-dream":       consolidate.ErrNoDream,
	"dream-conflict": consolidate.ErrDreamConflict,
	"dream-moved":    consolidate.ErrDreamMoved,
	"no-tip":         consolidate.ErrNoTip,
	"no-provider":    consolidate.ErrNoProvider,
}

// kindOf names err's kind ("" when it has none of kinds).
func kindOf(err error) string {
	for name, e := range kinds {
		if errors.Is(err, e) {
			return name
		}
	}
	return ""
}

// Error is a daemon's error as the asking command sees it: its message,
// and its kind for errors.Is.
type Error struct {
	Msg  string
	Kind string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the error of e's kind, nil when it has none.
func (e *Error) Unwrap() error { return kinds[e.Kind] }
