package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/remote"
)

// The git endpoints of the reference server: POST /v1/git/setup connects
// a user's memory to a private GitHub repository and pushes it, POST
// /v1/git/update syncs now, GET /v1/git/status?userId= says where it
// stands. All three answer remote.GitStatus. The work is package remote's;
// this file authorizes, serializes one user's git requests and maps errors
// to statuses.
//
// The GitHub token of a setup request goes to remote in memory only;
// remote keeps it in ROOT/credentials/<id> (0600, outside every
// repository) and scrubs it from every error. Nothing here logs or
// answers the request body.

// routeGit registers the git endpoints, or a 501 for all of them when
// the daemon has no sync configured.
func (s *Server) routeGit() {
	if s.cfg.Git == nil {
		s.mux.Handle("/v1/git/", s.auth(func(w http.ResponseWriter, r *http.Request, _ caller) {
			writeError(w, http.StatusNotImplemented, "git sync is not configured on this server")
		}))
		return
	}
	s.mux.Handle("POST /v1/git/setup", s.auth(s.gitSetup))
	s.mux.Handle("POST /v1/git/update", s.auth(s.gitUpdate))
	s.mux.Handle("GET /v1/git/status", s.auth(s.gitStatus))
}

func (s *Server) gitSetup(w http.ResponseWriter, r *http.Request, c caller) {
	var body struct {
		UserID      UserRef `json:"userId"`
		GitHubToken string  `json:"githubToken"`
		RepoName    string  `json:"repoName"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	req := remote.SetupRequest{GitHubToken: body.GitHubToken, RepoName: body.RepoName}
	if strings.TrimSpace(req.GitHubToken) == "" {
		writeError(w, http.StatusBadRequest, "githubToken is required")
		return
	}
	rt, id, ctx, done, ok := s.gitUser(w, r, c, body.UserID)
	if !ok {
		return
	}
	defer done()
	req.UserID = id
	st, err := s.cfg.Git.Setup(ctx, rt.Repo, rt.Tracker, req)
	if err != nil {
		s.gitFailed(w, "git setup failed", id, err)
		return
	}
	s.logUser(id).Info("git setup done", "repo", st.RepoURL)
	writeJSON(w, http.StatusOK, st)
}

func (s *Server) gitUpdate(w http.ResponseWriter, r *http.Request, c caller) {
	var req struct {
		UserID UserRef `json:"userId"`
	}
	if !s.decodeBody(w, r, &req) {
		return
	}
	rt, id, ctx, done, ok := s.gitUser(w, r, c, req.UserID)
	if !ok {
		return
	}
	defer done()
	if _, err := remote.URL(rt.Dir); errors.Is(err, remote.ErrNoRemote) {
		// Nothing to sync with is the client's state, not a failure of
		// the sync: no attempt, no retry, no warning.
		s.gitFailed(w, "git update without a remote", id, err)
		return
	}
	st, err := s.cfg.Git.Update(ctx, rt.Repo, rt.Tracker, id)
	if err != nil {
		s.gitFailed(w, "git update failed", id, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

// gitUser acquires user id for a setup or an update: the user (userFor),
// then its git lock, so that one git request of a user runs at a time,
// and a context bounded by handlerTimeout. done gives all three back.
func (s *Server) gitUser(w http.ResponseWriter, r *http.Request, c caller, ref UserRef) (rt *host.Runtime, id string, ctx context.Context, done func(), ok bool) {
	rt, release, id, ok := s.userFor(w, r, c, ref)
	if !ok {
		return nil, "", nil, nil, false
	}
	unlock, ok := s.gitLocks.lock(w, r, id)
	if !ok {
		release()
		return nil, "", nil, nil, false
	}
	ctx, cancel := context.WithTimeout(r.Context(), handlerTimeout)
	return rt, id, ctx, func() {
		cancel()
		unlock()
		release()
	}, true
}

// gitStatus reads the sync state only: no lock, no network.
func (s *Server) gitStatus(w http.ResponseWriter, r *http.Request, c caller) {
	rt, release, id, ok := s.userFor(w, r, c, UserRef(r.URL.Query().Get("userId")))
	if !ok {
		return
	}
	defer release()
	if r.URL.Query().Get("detail") == "sync" {
		writeJSON(w, http.StatusOK, syncDetail(s.cfg.Git.Status(rt.Repo, id), remote.ReadState(rt.Repo)))
		return
	}
	writeJSON(w, http.StatusOK, s.cfg.Git.Status(rt.Repo, id))
}

// gitSyncDetail is GET /v1/git/status?detail=sync: the reference's
// status and how far the repository is from the remote (a cluster node
// reads its users' replication lag from it).
type gitSyncDetail struct {
	remote.GitStatus
	Ahead          int        `json:"ahead"`
	Behind         int        `json:"behind"`
	OldestUnpushed *time.Time `json:"oldest_unpushed"` // null when nothing is unpushed
}

func syncDetail(gs remote.GitStatus, st remote.State) gitSyncDetail {
	d := gitSyncDetail{GitStatus: gs, Ahead: st.Ahead, Behind: st.Behind}
	if !st.OldestUnpushed.IsZero() {
		d.OldestUnpushed = &st.OldestUnpushed
	}
	return d
}

// gitFailed logs and answers a failed setup or update. err comes from
// package remote, which scrubs the token from every error it returns.
func (s *Server) gitFailed(w http.ResponseWriter, what, user string, err error) {
	code := gitStatusCode(err)
	msg := err.Error()
	if code == http.StatusConflict {
		msg = "not connected to a remote yet: POST /v1/git/setup first"
	}
	if code == http.StatusInternalServerError {
		msg = "the stored git credentials cannot be used; see the server log"
	}
	level := slog.LevelWarn
	if code == http.StatusConflict {
		level = slog.LevelInfo // not connected yet: the client's to fix
	}
	s.logUser(user).Log(context.Background(), level, what, "status", code, "err", err.Error())
	writeJSON(w, code, map[string]any{"ok": false, "error": msg}) // the reference's failure shape
}

// gitStatusCode maps a sync error to a status: what the client sent is
// wrong (a token GitHub refuses, a bad repository name) is 400; nothing
// to update is 409; a credentials file we cannot trust is 500; a time-out
// is 504; everything else failed on GitHub's or the git host's side (or
// on the way there) and is 502.
func gitStatusCode(err error) int {
	switch {
	case errors.Is(err, remote.ErrBadToken), errors.Is(err, remote.ErrBadRepoName):
		return http.StatusBadRequest
	case errors.Is(err, remote.ErrNoRemote):
		return http.StatusConflict
	case errors.Is(err, remote.ErrCredentialsMode):
		return http.StatusInternalServerError
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	}
	return http.StatusBadGateway
}

// userLocks serializes the git requests of one user: two syncs of one
// repository at once would race on its remote-tracking refs and the
// credentials file. Other users never wait.
type userLocks struct {
	mu sync.Mutex
	m  map[string]chan struct{}
}

// lock waits for user's lock, or answers 503 when the request ends first.
func (l *userLocks) lock(w http.ResponseWriter, r *http.Request, user string) (func(), bool) {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]chan struct{}{}
	}
	ch, ok := l.m[user]
	if !ok {
		ch = make(chan struct{}, 1)
		l.m[user] = ch
	}
	l.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, true
	case <-r.Context().Done():
		writeError(w, http.StatusServiceUnavailable, "another git request of this user is still running")
		return nil, false
	}
}
