// Package webui is mindmount's web page: a person's view of a memory
// repository — the memories ranked as the index ranks them, one memory with
// its history, diffs and provenance, the timeline of commits, search,
// status and a picture of the memory graph — and the four things a person
// does about it: revert a commit, retire or reactivate a memory, edit one,
// and ask for a consolidation now.
//
// Pages are rendered on the server with html/template (every string a
// memory, a file name or a commit message holds is escaped there) and the
// assets are embedded; the little JavaScript there is (live updates) is a
// file under static/, never inline, so the Content-Security-Policy allows
// scripts from the page's own origin only. Markdown is rendered by
// goldmark with raw HTML off.
//
// Every action is a POST carrying the session's CSRF token and is one
// commit through the repository's tracker, authored "ui": a prepared
// change (tracker.Apply) judged before anything is written, or the
// consolidator's own run or review. The page never moves a ref itself.
//
// Two ways in: mindmount ui serves one repository (Config.Single) and prints
// a URL with a one-time login token; mindmount serve --http mounts the same
// handler at /ui/ (Config.Users), where a person logs in with their user
// token and the admin key sees the list of users. A session of one user
// never reaches another user's pages.
package webui

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mindmount/mindmount/serve/host"
)

// Users is what serve mode needs of the daemon's users; *host.Host is one.
type Users interface {
	Acquire(ctx context.Context, id string) (*host.Runtime, func(), error)
	Users() []host.User
}

var _ Users = (*host.Host)(nil)

// Config configures a Server. Exactly one of Single and Users is set.
type Config struct {
	// Single is the one repository of mindmount ui.
	Single *host.Runtime
	// Users are serve's users; Verify says whose a login token is and
	// what it may do (serve: httpapi.Auth.Login, the daemon's one
	// authentication decision). Both are needed together.
	Users  Users
	Verify func(token string) (Grant, bool)
	// Prefix is the path the handler is mounted at, without a trailing
	// slash: "" for mindmount ui, "/ui" under serve.
	Prefix string
	// LoopbackHosts refuses requests whose Host header is not a loopback
	// name or address (a DNS-rebinding page cannot reach a loopback ui).
	LoopbackHosts bool
	Logger        *slog.Logger
	Now           func() time.Time
	// SessionTTL bounds a session (default 12 hours).
	SessionTTL time.Duration
	// Forward, when set with Users (mindmount serve's front), hands the
	// pages of user id, once the session may open them, to the handler it
	// returns — the user's worker, which runs as the user and answers them
	// in Trusted mode — instead of loading the user here.
	Forward func(ctx context.Context, id string) (http.Handler, func(), error)
	// Trusted, with Single (a serve worker), takes the session from the
	// front's headers (uiUserHeader, uiCSRFHeader) instead of a login: the
	// worker is reached only from serve, which checked the session.
	Trusted bool
	// Teams, in a serve member's worker, reaches her teams' writers for
	// the teams page (nil: no teams page).
	Teams TeamDesk
}

// Grant is what a login may do: see one user's pages (User) or every
// user's (Admin), and beyond reading, change memories (Write) and
// approve or reject dreams (Review).
type Grant struct {
	User                 string
	Admin, Write, Review bool
	// Still, when set, reports whether the credential the login was made
	// with still grants this (serve: the token is not revoked, its user
	// not removed, its scopes unchanged). It is asked on every request of
	// the session; the first "no" ends the session.
	Still func() bool
}

// allows reports whether g may send the request method to the
// repository page p: a read needs nothing more, approving or rejecting
// a dream needs Review, any other action Write.
func (g Grant) allows(method, p string) (bool, string) {
	if method != http.MethodPost {
		return true, ""
	}
	if p == "/review/approve" || p == "/review/reject" || p == "/teams/approve" || p == "/teams/reject" {
		return g.Admin || g.Review, "this login may not approve or reject dreams: log in with a token that has the review scope (mindmount users token ROOT ID --scope review) or the admin key"
	}
	return g.Admin || g.Write, "this login may only read: log in with a token that has the write scope to change memories"
}

// The headers serve's front sets on a page it forwards to a worker: the
// session's user and its CSRF token, which the worker's forms carry and
// its POSTs are checked against. The front always overwrites them.
const (
	uiUserHeader = "X-Mindmount-Ui-User"
	uiCSRFHeader = "X-Mindmount-Ui-Csrf"
)

// Server is the web page's http.Handler. Safe for concurrent use.
type Server struct {
	cfg   Config
	log   *slog.Logger
	pages map[string]*template.Template
	sess  *sessions
	login *loginToken // Single mode's one-time token
	files http.Handler
	views viewCache // what / and /graph show of a graph version (ui_cache.go)
	logs  logCache  // the timeline's commit lists
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	if (cfg.Single == nil) == (cfg.Users == nil) {
		return nil, errors.New("webui: set exactly one of Single and Users")
	}
	if cfg.Users != nil && cfg.Verify == nil {
		return nil, errors.New("webui: Users needs Verify")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	cfg.Prefix = strings.TrimSuffix(cfg.Prefix, "/")
	pages, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, pages: pages, sess: newSessions(cfg.SessionTTL, cfg.Now)}
	s.files = http.StripPrefix(cfg.Prefix+"/static/", http.FileServerFS(sub))
	if cfg.Single != nil {
		tok, err := newLoginToken()
		if err != nil {
			return nil, err
		}
		s.login = tok
	}
	return s, nil
}

// LoginURL is the address mindmount ui prints: the page at addr with the
// one-time login token. "" in serve mode.
func (s *Server) LoginURL(addr string) string {
	if s.login == nil {
		return ""
	}
	return "http://" + addr + s.cfg.Prefix + "/?token=" + url.QueryEscape(s.login.value)
}

// csp allows the page's own scripts, styles and images only: no inline
// script or style, no plugin, no framing, forms post to the page itself.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ServeHTTP answers one request. A panic is logged and answered 500.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("web page handler panicked", "path", r.URL.Path, "panic", v)
			http.Error(w, "internal error", http.StatusInternalServerError)
		}
	}()
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// The login URL carries a token: never send it to another site as a
	// referrer (same-origin, not no-referrer: that makes a browser send
	// "Origin: null" with the page's own forms).
	h.Set("Referrer-Policy", "same-origin")
	if s.cfg.LoopbackHosts && !loopbackHost(r.Host) {
		http.Error(w, "this page answers on a loopback address only (open the URL mindmount ui printed)", http.StatusForbidden)
		return
	}
	p, ok := strings.CutPrefix(r.URL.Path, s.cfg.Prefix)
	if !ok || (p != "" && !strings.HasPrefix(p, "/")) {
		http.NotFound(w, r)
		return
	}
	if p == "" {
		http.Redirect(w, r, s.cfg.Prefix+"/", http.StatusSeeOther)
		return
	}
	if strings.HasPrefix(p, "/static/") {
		h.Set("Cache-Control", "no-cache")
		s.files.ServeHTTP(w, r)
		return
	}
	h.Set("Cache-Control", "no-store")
	s.route(w, r, p)
}

// loopbackHost reports whether a Host header names this machine by a
// loopback address or "localhost".
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// view is one request on one repository's pages.
type view struct {
	w    http.ResponseWriter
	r    *http.Request
	sess *session
	rt   *host.Runtime
	user string // the repository's user; "" in single mode
	base string // URL path of the repository's pages, without trailing slash
}

// route dispatches a path below the prefix.
func (s *Server) route(w http.ResponseWriter, r *http.Request, p string) {
	if s.cfg.Single != nil && s.cfg.Trusted {
		sess := &session{user: r.Header.Get(uiUserHeader), csrf: r.Header.Get(uiCSRFHeader)}
		if sess.csrf == "" {
			http.Error(w, "no session", http.StatusForbidden)
			return
		}
		s.serveRepo(&view{w: w, r: r, sess: sess, rt: s.cfg.Single, user: sess.user, base: s.cfg.Prefix}, p)
		return
	}
	if s.cfg.Single != nil {
		if tok := r.URL.Query().Get("token"); tok != "" && r.Method == http.MethodGet {
			s.loginWithURL(w, r, tok)
			return
		}
		sess := s.sess.get(r)
		if sess == nil {
			s.needLogin(w, r)
			return
		}
		s.serveRepo(&view{w: w, r: r, sess: sess, rt: s.cfg.Single, base: s.cfg.Prefix}, p)
		return
	}
	switch p {
	case "/login":
		s.loginForm(w, r)
		return
	case "/logout":
		s.logout(w, r)
		return
	}
	sess := s.sess.get(r)
	if sess == nil {
		http.Redirect(w, r, s.cfg.Prefix+"/login", http.StatusSeeOther)
		return
	}
	if g := sess.grant; g.Still != nil && !g.Still() {
		s.endSession(w, r, sess)
		http.Redirect(w, r, s.cfg.Prefix+"/login", http.StatusSeeOther)
		return
	}
	if p == "/" {
		if !sess.admin {
			http.Redirect(w, r, s.userBase(sess.user)+"/", http.StatusSeeOther)
			return
		}
		s.userList(w, r, sess)
		return
	}
	s.userPages(w, r, sess, p)
}

// userPages answers a session's request for a page of one user (/u/ID/…)
// in serve mode: its own user's (any for the admin), within its grant,
// counted among that user's open requests.
func (s *Server) userPages(w http.ResponseWriter, r *http.Request, sess *session, p string) {
	rest, ok := strings.CutPrefix(p, "/u/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	id, sub, _ := strings.Cut(rest, "/")
	sub = "/" + sub
	if !sess.admin && id != sess.user {
		// Another user's pages: the same answer whether or not they exist.
		http.Error(w, "this session may not open that user's memory", http.StatusForbidden)
		return
	}
	if ok, why := sess.grant.allows(r.Method, sub); !ok {
		http.Error(w, why, http.StatusForbidden)
		return
	}
	done, ok := hold(w, r, id)
	if !ok {
		return
	}
	defer done()
	if s.cfg.Forward != nil {
		h, release, err := s.cfg.Forward(r.Context(), id)
		if err != nil {
			s.log.Warn("web page cannot reach the user's worker", "user", id, "err", err)
			http.Error(w, "that user's memory cannot be opened", http.StatusNotFound)
			return
		}
		defer release()
		out := r.Clone(r.Context())
		out.Header.Set(uiUserHeader, id)
		out.Header.Set(uiCSRFHeader, sess.csrf)
		out.Header.Del("Cookie") // the front's session: no worker needs it
		out.Header.Del("Authorization")
		h.ServeHTTP(w, out)
		return
	}
	rt, release, err := s.cfg.Users.Acquire(r.Context(), id)
	if err != nil {
		s.log.Warn("web page cannot load user", "user", id, "err", err)
		http.Error(w, "that user's memory cannot be opened", http.StatusNotFound)
		return
	}
	defer release()
	s.serveRepo(&view{w: w, r: r, sess: sess, rt: rt, user: id, base: s.userBase(id)}, sub)
}

func (s *Server) userBase(id string) string {
	return s.cfg.Prefix + "/u/" + url.PathEscape(id)
}

// serveRepo dispatches the pages and actions of one repository.
func (s *Server) serveRepo(v *view, p string) {
	if v.r.Method == http.MethodPost {
		if !s.checkCSRF(v.w, v.r, v.sess) {
			return
		}
		switch p {
		case "/revert":
			s.revert(v)
		case "/retire":
			s.setStatus(v, true)
		case "/reactivate":
			s.setStatus(v, false)
		case "/edit":
			s.edit(v)
		case "/consolidate":
			s.consolidate(v)
		case "/review/approve":
			s.review(v, true)
		case "/review/reject":
			s.review(v, false)
		case "/teams/approve":
			s.teamVerdict(v, true)
		case "/teams/reject":
			s.teamVerdict(v, false)
		case "/teams/promote":
			s.teamPromote(v)
		default:
			http.NotFound(v.w, v.r)
		}
		return
	}
	if v.r.Method != http.MethodGet && v.r.Method != http.MethodHead {
		http.Error(v.w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch {
	case p == "/":
		s.memories(v)
	case strings.HasPrefix(p, "/m/"):
		s.memory(v, strings.TrimPrefix(p, "/m/"))
	case strings.HasPrefix(p, "/edit/"):
		s.editForm(v, strings.TrimPrefix(p, "/edit/"))
	case p == "/log":
		s.timeline(v)
	case p == "/search":
		s.search(v)
	case p == "/status":
		s.status(v)
	case p == "/graph":
		s.graph(v)
	case p == "/skills" || strings.HasPrefix(p, "/skills/"):
		s.skills(v, strings.TrimPrefix(p, "/skills"))
	case p == "/teams":
		s.teams(v)
	case p == "/events":
		s.events(v)
	default:
		http.NotFound(v.w, v.r)
	}
}
