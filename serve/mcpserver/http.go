package mcpserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mindmount/mindmount/serve/host"
)

// New returns the MCP server of one served repository.
func New(rt *host.Runtime, opts Options) *mcp.Server {
	return NewServer(Repo{Graph: rt.Graph, Tracker: rt.Tracker, Git: rt.Repo, Listeners: rt.Listeners}, opts)
}

// Resolver finds the repository an HTTP request is for (the caller does the
// authentication) and holds it loaded until release is called. Its error
// is answered with ErrorStatus's code.
type Resolver func(r *http.Request) (rt *host.Runtime, release func(), err error)

// ErrorStatus is the HTTP status a resolver's error is answered with:
// errors that wrap host.ErrUnknownUser are 404, anything else 403.
func ErrorStatus(err error) int {
	if errors.Is(err, host.ErrUnknownUser) {
		return http.StatusNotFound
	}
	return http.StatusForbidden
}

// Handler serves MCP over streamable HTTP for many repositories: each
// request is resolved to its runtime, which stays acquired while the
// request is served. There is one MCP server (and one set of sessions) per
// loaded runtime; when a runtime was unloaded and loaded again, its old
// sessions are gone and clients start a new one, as the protocol says for
// an unknown session ID.
type Handler struct {
	resolve Resolver
	opts    Options
	log     *slog.Logger

	mu   sync.Mutex
	byRT map[string]*rtHandler // runtime key (ID, else Dir) -> its handler
}

// sessionTimeout ends sessions a client left without saying goodbye.
const sessionTimeout = 30 * time.Minute

// DefaultMaxSessions is how many MCP sessions one repository (one user)
// may have open at once over HTTP.
const DefaultMaxSessions = 32

// maxNewSessionBody bounds the body of a request that starts a session
// (initialize): what a session keeps of its client (clientInfo, its
// capabilities) is at most this big, whatever the client sent.
const maxNewSessionBody = 16 << 10

// sessionHeader names a request's session (the streamable transport's).
const sessionHeader = "Mcp-Session-Id"

type rtHandler struct {
	rt  *host.Runtime
	srv *mcp.Server
	h   *mcp.StreamableHTTPHandler
	// starting serialises the start of new sessions, so two at once
	// cannot both pass the cap.
	starting sync.Mutex
}

var _ http.Handler = (*Handler)(nil)

// NewHandler returns an http.Handler serving MCP at whatever path it is
// mounted on (mindmount serve --http mounts it at /mcp).
func NewHandler(resolve Resolver, opts Options) *Handler {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Handler{resolve: resolve, opts: opts, log: log, byRT: map[string]*rtHandler{}}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, release, err := h.resolve(r)
	if err != nil {
		http.Error(w, err.Error(), ErrorStatus(err))
		return
	}
	defer release()
	e := h.forRuntime(rt)
	if r.Method == http.MethodPost && r.Header.Get(sessionHeader) == "" {
		h.startSession(e, w, r)
		return
	}
	e.h.ServeHTTP(w, r)
}

// startSession serves a request that starts a session, if the
// repository has room for one more: 429 past MaxSessions, 413 for a
// body over maxNewSessionBody.
func (h *Handler) startSession(e *rtHandler, w http.ResponseWriter, r *http.Request) {
	max := h.opts.MaxSessions
	if max <= 0 {
		max = DefaultMaxSessions
	}
	e.starting.Lock()
	defer e.starting.Unlock()
	n := 0
	for range e.srv.Sessions() {
		n++
	}
	if n >= max {
		w.Header().Set("Retry-After", "30")
		http.Error(w, fmt.Sprintf("this memory has %d MCP sessions open, the most it keeps: end one (DELETE with its %s) or wait until an idle one expires", n, sessionHeader), http.StatusTooManyRequests)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxNewSessionBody+1))
	if err != nil {
		http.Error(w, "the request body could not be read", http.StatusBadRequest)
		return
	}
	if len(body) > maxNewSessionBody {
		http.Error(w, fmt.Sprintf("a request that starts a session is at most %d KiB (clientInfo and capabilities included)", maxNewSessionBody>>10), http.StatusRequestEntityTooLarge)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	e.h.ServeHTTP(w, r)
}

// forRuntime returns the streamable handler of rt, making it on first use
// and replacing one left from an earlier load of the same repository.
func (h *Handler) forRuntime(rt *host.Runtime) *rtHandler {
	key := rt.ID
	if key == "" {
		key = rt.Dir
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if e, ok := h.byRT[key]; ok && e.rt == rt {
		return e
	}
	srv := New(rt, h.opts)
	sh := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Logger: sdkLogger(h.log), SessionTimeout: sessionTimeout})
	e := &rtHandler{rt: rt, srv: srv, h: sh}
	h.byRT[key] = e
	return e
}
