// Package control is a running daemon's control socket: the one way a
// command ("mindmount sync", "mindmount consolidate", "mindmount review
// approve N") asks the daemon that serves a repository to do what only the
// repository's one writer may do. The socket lives in the repository's git
// directory (SocketFile, mode 0600 in a folder of the user's), and the
// daemon answers only a peer of its own uid, the repository owner's or
// root's (SO_PEERCRED): one user never drives another's daemon.
//
// The socket is a file rather than an abstract name because a file in the
// user's own 0700 folder is one nobody else can reach or take first: an
// abstract name can be bound by any local user before the daemon (a
// squatter then answers in the daemon's place). A repository at a path
// too long for a socket address (107 bytes) is bound and reached through
// a handle on that same folder (/proc/self/fd/N/control.sock), so the
// file, its folder's permissions and the peer check are the same at any
// path.
//
// The protocol is one request and one answer per connection, each a line
// of JSON: {"verb":"review approve","n":3} → {"commit":"…"}. A stream verb
// (mcp, ui) then hands the connection to its door: "mindmount mcp" and
// "mindmount ui" started beside a running daemon are served by it this
// way, so one daemon, the repository's one writer, serves every door. A verb is
// served by whoever registered it (Server.Handle): the runtime for
// consolidation and review, the sync loop for sync.
package control

import (
	"encoding/json"
	"errors"
	"sync"

	"github.com/mindmount/mindmount/memgraph/recall"
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
	Add         Verb = "add"            // write one new memory (Memory); answers its path in Data and the commit
	Recall      Verb = "recall"         // rank the daemon's own memories for a question (Question); answers a RecallResult in Data
	TeamReview  Verb = "team review"    // list, approve or reject a team's proposals (TeamReview) through the team's writer; answers its result in Data
	TeamPromote Verb = "team promote"   // copy a committed memory of the daemon's into a team (TeamPromote) through the team's writer; answers its result in Data

	// Streams (Server.HandleStream, Attach): after the answer the
	// connection carries the door's own protocol.
	MCP    Verb = "mcp"     // MCP's JSON-RPC lines: one client's session
	UI     Verb = "ui"      // a web page for one "mindmount ui": answers its Session; then the command sends its address and reads the login URL; the page lasts as long as the connection
	UIHTTP Verb = "ui http" // one HTTP connection to the page of Session
)

// Request is one request to a daemon.
type Request struct {
	Verb   Verb   `json:"verb"`
	N      int    `json:"n,omitempty"`      // the dream of review approve and reject
	Tip    string `json:"tip,omitempty"`    // review approve: the dream's tip as it was shown
	Reason string `json:"reason,omitempty"` // review reject: why
	// Session names the page an HTTP connection is for (UI's id).
	Session string `json:"session,omitempty"`
	// Memory is add's new memory.
	Memory *NewMemory `json:"memory,omitempty"`
	// Question is recall's question.
	Question *Question `json:"question,omitempty"`
	// TeamReview is team review's ask.
	TeamReview *TeamReviewAsk `json:"team_review,omitempty"`
	// TeamPromote is team promote's ask.
	TeamPromote *TeamPromoteAsk `json:"team_promote,omitempty"`
}

// TeamPromoteAsk is what "mindmount promote" asks a serve member's
// worker: its committed memory Path, copied into Team.
type TeamPromoteAsk struct {
	Team string `json:"team"`
	Path string `json:"path"`
}

// TeamReviewAsk is what "mindmount review --team" asks a serve member's
// worker, which asks the team's writer with its own uid: Op "list",
// "approve" (Branch at Tip) or "reject" (Branch at Tip).
type TeamReviewAsk struct {
	Team   string `json:"team"`
	Op     string `json:"op"`
	Branch string `json:"branch,omitempty"`
	Tip    string `json:"tip,omitempty"`
}

// Question is what "mindmount recall" asks a daemon: the daemon ranks the
// memories of the repository it serves (and the teams it attached), never
// another's — the request names no repository or path.
type Question struct {
	Q       string `json:"q"`
	K       int    `json:"k,omitempty"`
	Kind    string `json:"kind,omitempty"`
	All     bool   `json:"all,omitempty"`
	Literal bool   `json:"literal,omitempty"` // the question's own words only (--no-wordnet)
	Scope   string `json:"scope,omitempty"`
}

// RecallResult is a daemon's answer to Recall, in Answer.Data: the hits,
// best first, and whether teams were searched too (a hit's path then
// names its scope).
type RecallResult struct {
	Hits   []recall.Hit `json:"hits"`
	Scoped bool         `json:"scoped,omitempty"`
}

// NewMemory is what "mindmount add" asks a daemon to write: the daemon
// names the file and renders it.
type NewMemory struct {
	Fact        string `json:"fact"`
	Description string `json:"description,omitempty"` // default: the fact's first line
	Kind        string `json:"kind,omitempty"`        // "user" (default) or "character"
	Topic       string `json:"topic,omitempty"`
}

// Answer is a daemon's answer. Error is empty on success.
type Answer struct {
	Error string `json:"error,omitempty"`
	// Kind names Error's kind (see kinds), so the asking command can
	// tell them apart with errors.Is, as if it had run the verb itself.
	Kind   string `json:"kind,omitempty"`
	Commit string `json:"commit,omitempty"` // the commit the verb made
	// Session and URL are a ui login's: the page's name for its HTTP
	// connections and the address to open, with its one-time token.
	Session string          `json:"session,omitempty"`
	URL     string          `json:"url,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"` // the verb's own result (sync's state, consolidation's report)
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

// kinds are the errors an answer can carry across the socket by name:
// the protocol's own, and those the serving side names (NameErrors). A
// name unknown to the asking process (a command built without the
// serving side) still carries the message, matched by no errors.Is.
var (
	kindsMu sync.RWMutex
	kinds   = map[string]error{
		"no-daemon":  ErrNoDaemon,
		"refused":    ErrRefused,
		"not-served": ErrNotServed,
		"stopping":   ErrStopping,
	}
)

// NameErrors lets answers carry named's errors across the socket: the
// serving side's error by its name, recognised by errors.Is on the asking
// side. The side that serves a verb names the errors its handlers return
// (serve/host names consolidation's), so a client of the socket alone
// does not link, nor initialise, what serves it. A name given again
// names the later error.
func NameErrors(named map[string]error) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	for name, err := range named {
		kinds[name] = err
	}
}

// kindOf names err's kind ("" when it has none of kinds).
func kindOf(err error) string {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	for name, e := range kinds {
		if errors.Is(err, e) {
			return name
		}
	}
	return ""
}

// kind is the error named name, nil when none is.
func kind(name string) error {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	return kinds[name]
}

// Error is a daemon's error as the asking command sees it: its message,
// and its kind for errors.Is.
type Error struct {
	Msg  string
	Kind string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the error of e's kind, nil when it has none.
func (e *Error) Unwrap() error { return kind(e.Kind) }
