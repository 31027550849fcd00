package webui

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// cookieName holds the session; loginCookie the CSRF secret of the serve
// login form, before there is a session.
const (
	cookieName  = "mindmount_ui"
	loginCookie = "mindmount_ui_login"
	// maxSessions bounds the session table: a client that logs in in a
	// loop cannot grow it without end (the oldest session goes).
	maxSessions = 1024
)

// session is one logged-in browser.
type session struct {
	id      string
	user    string // serve: the user; single mode: ""
	admin   bool   // serve's admin key: every user
	grant   Grant  // what it may do (Config.Verify's answer; single mode: all)
	csrf    string // the token every form of the session carries
	expires time.Time
}

type sessions struct {
	ttl time.Duration
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*session
}

func newSessions(ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{ttl: ttl, now: now, m: map[string]*session{}}
}

// randomToken is 32 random bytes, URL-safe.
func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// create starts a session and returns it.
func (ss *sessions) create(g Grant) (*session, error) {
	id, err := randomToken()
	if err != nil {
		return nil, err
	}
	csrf, err := randomToken()
	if err != nil {
		return nil, err
	}
	now := ss.now()
	s := &session{id: id, user: g.User, admin: g.Admin, grant: g, csrf: csrf, expires: now.Add(ss.ttl)}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k, old := range ss.m {
		if now.After(old.expires) {
			delete(ss.m, k)
		}
	}
	if len(ss.m) >= maxSessions {
		var oldest *session
		for _, old := range ss.m {
			if oldest == nil || old.expires.Before(oldest.expires) {
				oldest = old
			}
		}
		delete(ss.m, oldest.id)
	}
	ss.m[id] = s
	return s, nil
}

// get returns the live session of r's cookie, nil when there is none.
func (ss *sessions) get(r *http.Request) *session {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return nil
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.m[c.Value]
	if s == nil {
		return nil
	}
	if ss.now().After(s.expires) {
		delete(ss.m, s.id)
		return nil
	}
	return s
}

func (ss *sessions) drop(id string) {
	ss.mu.Lock()
	delete(ss.m, id)
	ss.mu.Unlock()
}

// setCookie gives the browser its session: HttpOnly (no script reads it),
// SameSite=Strict (no other site's page sends it), Secure behind TLS.
func (s *Server) setCookie(w http.ResponseWriter, r *http.Request, sess *session) {
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName,
		Value:    sess.id,
		Path:     s.cfg.Prefix + "/",
		Expires:  sess.expires,
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   r.TLS != nil,
	})
}

// loginToken is mindmount ui's one-time token: the first GET that shows
// it gets a session, every later one is refused.
type loginToken struct {
	value string
	mu    sync.Mutex
	used  bool
}

func newLoginToken() (*loginToken, error) {
	v, err := randomToken()
	if err != nil {
		return nil, err
	}
	return &loginToken{value: v}, nil
}

// take reports whether tok is the token and was not used yet; it is used
// from then on.
func (t *loginToken) take(tok string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.used || subtle.ConstantTimeCompare([]byte(tok), []byte(t.value)) != 1 {
		return false
	}
	t.used = true
	return true
}

// loginWithURL exchanges the printed URL's token for a session cookie,
// then sends the browser to the same page without the token, so it stays
// out of the history and the address bar.
func (s *Server) loginWithURL(w http.ResponseWriter, r *http.Request, tok string) {
	clean := *r.URL
	q := clean.Query()
	q.Del("token")
	clean.RawQuery = q.Encode()
	if !s.login.take(tok) {
		if s.sess.get(r) != nil {
			// This browser already logged in with it (a reload).
			http.Redirect(w, r, clean.RequestURI(), http.StatusSeeOther)
			return
		}
		http.Error(w, "this login link was already used or is wrong; restart mindmount ui for a new one", http.StatusForbidden)
		return
	}
	sess, err := s.sess.create(Grant{Write: true, Review: true})
	if err != nil {
		http.Error(w, "cannot start a session", http.StatusInternalServerError)
		return
	}
	s.setCookie(w, r, sess)
	http.Redirect(w, r, clean.RequestURI(), http.StatusSeeOther)
}

// needLogin answers a single-mode request without a session.
func (s *Server) needLogin(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	w.Write([]byte("Not logged in: open the URL with ?token= that mindmount ui printed when it started.\n"))
}

// sameOrigin refuses a request another site's page made. A browser says
// where a request comes from in Sec-Fetch-Site, which no page can forge;
// older browsers say it in Origin. A client that sends neither is not a
// browser acting for another site: the CSRF token decides.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin":
		return true
	case "":
	default: // cross-site, same-site (another port or subdomain), none
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}

// checkCSRF refuses a POST (403) unless it comes from this page with the
// session's token.
func (s *Server) checkCSRF(w http.ResponseWriter, r *http.Request, sess *session) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if !sameOrigin(r) {
		http.Error(w, "refused: the request came from another site", http.StatusForbidden)
		return false
	}
	tok := r.PostFormValue("csrf")
	if tok == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(sess.csrf)) != 1 {
		http.Error(w, "refused: the form's CSRF token is missing or wrong; reload the page and try again", http.StatusForbidden)
		return false
	}
	return true
}

// maxForm bounds a form: a memory is at most 64 KiB.
const maxForm = 256 << 10

// loginForm is serve's login page: a user token or the admin key.
func (s *Server) loginForm(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		c, err := r.Cookie(loginCookie)
		if !sameOrigin(r) || err != nil || c.Value == "" ||
			subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) != 1 {
			http.Error(w, "refused: the login form's CSRF token is missing or wrong; reload the login page", http.StatusForbidden)
			return
		}
		g, ok := s.cfg.Verify(r.PostFormValue("token"))
		if !ok {
			s.render(w, "login", http.StatusUnauthorized, map[string]any{"Prefix": s.cfg.Prefix, "CSRF": c.Value, "Error": "That token is not valid."})
			return
		}
		sess, err := s.sess.create(g)
		if err != nil {
			http.Error(w, "cannot start a session", http.StatusInternalServerError)
			return
		}
		s.setCookie(w, r, sess)
		http.Redirect(w, r, s.cfg.Prefix+"/", http.StatusSeeOther)
		return
	}
	tok, err := randomToken()
	if err != nil {
		http.Error(w, "cannot start a session", http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: tok, Path: s.cfg.Prefix + "/login",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	s.render(w, "login", http.StatusOK, map[string]any{"Prefix": s.cfg.Prefix, "CSRF": tok})
}

// logout ends the session (a POST with its CSRF token).
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	sess := s.sess.get(r)
	if r.Method != http.MethodPost || sess == nil {
		http.Redirect(w, r, s.cfg.Prefix+"/login", http.StatusSeeOther)
		return
	}
	if !s.checkCSRF(w, r, sess) {
		return
	}
	s.endSession(w, r, sess)
	http.Redirect(w, r, s.cfg.Prefix+"/login", http.StatusSeeOther)
}

// endSession forgets sess and tells the browser to drop its cookie.
func (s *Server) endSession(w http.ResponseWriter, r *http.Request, sess *session) {
	s.sess.drop(sess.id)
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: s.cfg.Prefix + "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
}
