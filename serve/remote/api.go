package remote

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
)

// The HTTP API's git endpoints (POST /v1/git/setup, POST /v1/git/update,
// GET /v1/git/status?userId=) in the reference system's shapes. The HTTP
// front authenticates, resolves the user's repository and calls these.

// SetupRequest is the body of POST /v1/git/setup.
type SetupRequest struct {
	UserID      string `json:"userId"`
	GitHubToken string `json:"githubToken"`
	RepoName    string `json:"repoName"`
}

// GitStatus is the reply of all three endpoints. It holds the fields of
// every reply of the reference server's three (setup's ok and username,
// status's repo_name and configured_at) so that one of its clients reads
// what it expects from any of them.
type GitStatus struct {
	OK             bool       `json:"ok"` // the request succeeded (a failure is {"ok":false,"error":…})
	UserID         string     `json:"userId"`
	Connected      bool       `json:"connected"`
	GitHubUsername string     `json:"github_username"`
	Username       string     `json:"username"` // github_username again, as setup's reply names it
	RepoName       string     `json:"repo_name"`
	RepoURL        string     `json:"repo_url"`
	ConfiguredAt   *time.Time `json:"configured_at"` // null until setup
	LastPush       *time.Time `json:"last_push"`
}

// API serves the git endpoints for one daemon.
type API struct {
	GitHubAPI string // "" is DefaultGitHubAPI
	// Credentials returns where a user's token is kept: a file outside
	// every repository (CredentialsFor).
	Credentials func(userID string) Credentials
	// Logger receives the syncs' outcome lines; nil is slog.Default().
	Logger *slog.Logger
}

func (a API) options(userID string, w tracker.Writer) Options {
	o := Options{Writer: w, Logger: a.Logger}
	if a.Credentials != nil {
		o.Credentials = a.Credentials(userID)
	}
	return o
}

// Setup is POST /v1/git/setup for the user's repository r. The reply never
// holds the token; errors are scrubbed of it.
func (a API) Setup(ctx context.Context, r *gitrepo.Repo, w tracker.Writer, req SetupRequest) (GitStatus, error) {
	if req.GitHubToken == "" {
		return GitStatus{}, errors.New("githubToken is required")
	}
	_, err := SetupGitHub(ctx, r, GitHub{API: a.GitHubAPI, Token: req.GitHubToken}, req.RepoName, a.options(req.UserID, w))
	return a.Status(r, req.UserID), scrub(err, req.GitHubToken)
}

// Update is POST /v1/git/update: sync now.
func (a API) Update(ctx context.Context, r *gitrepo.Repo, w tracker.Writer, userID string) (GitStatus, error) {
	_, err := New(r, a.options(userID, w)).Sync(ctx)
	return a.Status(r, userID), err
}

// Status is GET /v1/git/status.
func (a API) Status(r *gitrepo.Repo, userID string) GitStatus {
	st := ReadState(r)
	out := GitStatus{OK: true, UserID: userID, Connected: st.Remote != "", GitHubUsername: st.Account, Username: st.Account,
		RepoName: st.RepoName, RepoURL: st.Remote}
	if !st.Configured.IsZero() {
		t := st.Configured
		out.ConfiguredAt = &t
	}
	if !st.LastPush.IsZero() {
		t := st.LastPush
		out.LastPush = &t
	}
	return out
}

// CredentialsFor is where a served user's token is kept:
// ROOT/credentials/<id>/git, beside ROOT/users/ and outside every
// repository. The folder ROOT/credentials/<id> belongs to the user (0700),
// so the user's worker reads and replaces the file as the user, and no
// other user can.
func CredentialsFor(root, userID string) Credentials {
	return Credentials{Path: CredentialsDir(root, userID) + "/git"}
}

// CredentialsDir is the user's own folder under ROOT/credentials.
func CredentialsDir(root, userID string) string {
	return root + "/credentials/" + userID
}
