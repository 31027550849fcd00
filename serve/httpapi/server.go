// Package httpapi is mindmount serve's HTTP front, compatible with the
// reference server's API: streaming chat with the user's compiled memory
// (POST /v1/chat), ending a session (POST /v1/bye), consolidating a posted
// transcript (POST /v1/consolidate), recall (GET /v1/recall) and health
// (GET /health) and GitHub sync (/v1/git/setup, update, status), behind
// an admin key and per-user tokens; MCP is mounted at /mcp when the daemon
// provides it. It reaches users only through the
// host (Users) and the model only through the daemon's fair pool.
package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/remote"
)

// Users is what the API needs of the daemon's users; *host.Host is one.
type Users interface {
	// Acquire loads user id and holds it until release is called.
	Acquire(ctx context.Context, id string) (*host.Runtime, func(), error)
	UserList
}

// UserList lists the registered users (health counts the loaded ones);
// mindmount serve's front needs only this (see Config.Forward).
type UserList interface {
	Users() []host.User
	// Lookup says whether user id is registered, without loading it.
	Lookup(id string) (host.User, error)
}

var _ Users = (*host.Host)(nil)

// Config configures a Server.
type Config struct {
	Users Users
	// Pool is the daemon's one pool of model calls; nil means no model is
	// configured and chat answers 503.
	Pool *llm.Pool
	// AdminKey, when set, is required (Authorization: Bearer) on every
	// endpoint but /health; it may act for any user.
	AdminKey string
	// Tokens are the per-user tokens; nil means none.
	Tokens *TokenStore
	// Forward, when set, makes the server mindmount serve's front: every
	// request but /health is authorized here and answered by the user's
	// worker (http_forward.go); List then lists the users for /health, and
	// Users is not used.
	Forward Forwarder
	List    UserList
	// RequireAuth requires credentials on every endpoint but /health from
	// the start, whatever the listener (Serve requires them anyway on a
	// listener that is not loopback).
	RequireAuth bool
	// Auth, when set, is the authentication decision to share with the
	// daemon's other fronts (the web page's login): AdminKey, Tokens and
	// RequireAuth are then not used. Nil: New makes one of them.
	Auth *Auth
	// MCP, when set, is served at /mcp behind the same auth; it finds the
	// user with RequestUser.
	MCP http.Handler
	// UI, when set, is served at /ui/ without the API's bearer auth: the
	// web page keeps its own login and sessions (serve/webui).
	UI http.Handler
	// Git answers /v1/git/* (setup, update, status); nil answers 501.
	Git *remote.API
	// Provision, when set, adds user id (an ID host.IDFor gave a client's
	// userId) on its first request: serve --auto-users. It returns once
	// the user is registered and Users can acquire it. Nil: an unknown
	// user is 404.
	Provision func(ctx context.Context, id string) error
	// CORS lists the origins a browser may call the API from ("*": any);
	// none means no CORS headers at all.
	CORS []string
	// RecallK is how many recalled memories go into a chat's system
	// prompt (default 5).
	RecallK int
	// History is how many earlier messages of a session go to the model
	// with a new one (default 20).
	History int
	// MaxPerUser bounds the requests one user has in flight, streams
	// included (default DefaultMaxPerUser; past it 429); MaxOpen all of
	// them (default DefaultMaxOpen; past it 503); MaxConns the
	// connections Serve holds open (default a quarter of the descriptor
	// limit, at most 1024; past it a new one is answered 503 and closed).
	MaxPerUser, MaxOpen, MaxConns int
	// MaxBody bounds a request body in bytes (default DefaultMaxBody;
	// past it 413): serve --max-body.
	MaxBody int64
	// User, when set, is the one user this server serves (serve's
	// worker), whose Logger names them already: log lines do not repeat
	// the user.
	User string
	// Ready, when set, says whether a request would now be answered
	// without waiting for a user to load (serve's warm-up is done);
	// until it does, /health answers 503 "starting", so that a load
	// balancer or a client that waits for 200 never sends a request that
	// pays for the load. Nil: ready from the start.
	Ready func() bool
	// Cluster, when set, is /health's "cluster" field: this serve node's
	// place in a cluster (no user names: /health needs no credentials).
	Cluster func() any
	// MountHere, when set, answers POST /v1/cluster/mount (admin key
	// only): a sandbox on this node is about to bind the user's mount,
	// so the user is moved here; it returns the mount's path.
	MountHere func(ctx context.Context, id string) (string, error)
	// Version is the daemon's version, reported by /health.
	Version string
	Logger  *slog.Logger
	Now     func() time.Time
}

// Server serves the API. Safe for concurrent use.
type Server struct {
	cfg      Config
	log      *slog.Logger
	started  time.Time
	mux      *http.ServeMux
	closing  atomic.Bool
	authn    *Auth // the one authentication decision (http_auth.go)
	sessions sessions
	gitLocks userLocks
	open     openRequests // http_limits.go
	// routesOf holds the API's endpoints (a front's: its workers'), for
	// telling an unknown path (404) from a wrong method (405).
	routesOf *http.ServeMux
}

// DefaultMaxBody is Config.MaxBody's default: 1 MiB.
const DefaultMaxBody = 1 << 20

// New returns a server for cfg.
func New(cfg Config) *Server {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RecallK <= 0 {
		cfg.RecallK = 5
	}
	if cfg.History <= 0 {
		cfg.History = 20
	}
	s := &Server{cfg: cfg, log: cfg.Logger, started: cfg.Now(), mux: http.NewServeMux()}
	s.sessions.m = map[string]*session{}
	if cfg.MaxPerUser <= 0 {
		cfg.MaxPerUser = DefaultMaxPerUser
	}
	if cfg.MaxOpen <= 0 {
		cfg.MaxOpen = DefaultMaxOpen
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = defaultMaxConns()
	}
	s.cfg = cfg
	s.open.perUser, s.open.total = cfg.MaxPerUser, cfg.MaxOpen
	s.authn = cfg.Auth
	if s.authn == nil {
		s.authn = NewAuth(cfg.AdminKey, cfg.Tokens, cfg.RequireAuth)
	}
	s.mux.HandleFunc("GET /health", s.health)
	if cfg.UI != nil {
		s.mux.Handle("/ui/", s.counted(cfg.UI))
	}
	if cfg.MountHere != nil { // the front's own: a cluster node's
		s.mux.Handle("POST /v1/cluster/mount", s.auth(s.mountHere))
	}
	if cfg.Forward != nil {
		// The front answers what its workers answer: the same routes,
		// each forwarded; an unknown path is 404 and a wrong method 405
		// here, before anyone is asked for credentials or a user.
		shape := &Server{cfg: cfg, log: s.log, mux: http.NewServeMux()}
		shape.cfg.MCP = http.NotFoundHandler() // the workers serve /mcp and git
		shape.cfg.Git = &remote.API{}
		shape.mux.HandleFunc("GET /health", s.health)
		shape.routes()
		s.routesOf = shape.mux
		fwd := s.auth(s.forward)
		s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			if _, pattern := s.routesOf.Handler(r); pattern == "" {
				s.notFound(w, r)
				return
			}
			fwd.ServeHTTP(w, r)
		})
		return s
	}
	s.routes()
	s.routesOf = s.mux
	s.mux.HandleFunc("/", s.notFound)
	return s
}

// logUser is the logger for a line about user: it names the user once.
func (s *Server) logUser(user string) *slog.Logger {
	if s.cfg.User != "" {
		return s.log
	}
	return s.log.With("user", user)
}

// routes registers the API's endpoints on s.mux.
func (s *Server) routes() {
	s.mux.Handle("POST /v1/chat", s.auth(s.chat))
	s.mux.Handle("POST /v1/bye", s.auth(s.bye))
	s.mux.Handle("POST /v1/consolidate", s.auth(s.consolidate))
	s.mux.Handle("GET /v1/recall", s.auth(s.recall))
	s.routeGit()    // http_git.go
	s.routeReview() // http_review.go
	if s.cfg.MCP != nil {
		s.mux.Handle("/mcp", s.authMCP(s.cfg.MCP))
		s.mux.Handle("/mcp/", s.authMCP(s.cfg.MCP))
	}
}

// ServeHTTP answers one request; a panic in a handler is logged and
// answered 500 instead of taking the daemon down.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("http handler panicked", "path", r.URL.Path, "panic", v)
			writeError(w, http.StatusInternalServerError, "internal error")
		}
	}()
	if s.cors(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// Timeouts of the http.Server. There is no WriteTimeout: a chat stream
// lasts as long as the model talks, bounded by the model call's own
// timeout; every handler but chat finishes within handlerTimeout.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second // a 1 MiB body, slowly
	idleTimeout       = 2 * time.Minute
	handlerTimeout    = 10 * time.Minute // consolidation of a long transcript
)

// Serve serves on ln until ctx ends, then shuts down gracefully: health
// says 503 at once, open streams get shutdownGrace to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.authn.RequireFor(ln.Addr())
	ln = &connLimit{Listener: ln, max: int64(s.cfg.MaxConns)}
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		s.closing.Store(true)
		sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil {
			hs.Close()
		}
	}()
	err := hs.Serve(ln)
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

const shutdownGrace = 5 * time.Second

// SetClosing makes health answer 503 (the daemon is shutting down).
func (s *Server) SetClosing() { s.closing.Store(true) }

// notFound answers a request no route took: 405 with Allow when the path
// is an endpoint of another method (GET /v1/chat), else 404.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		if m == r.Method {
			continue
		}
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, pattern := s.routesOf.Handler(r2); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		writeError(w, http.StatusNotFound, "no such endpoint")
		return
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	writeError(w, http.StatusMethodNotAllowed, r.Method+" is not allowed here: use "+strings.Join(allow, " or "))
}
