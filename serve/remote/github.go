package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
)

// DefaultGitHubAPI is github.com's REST API; GitHub Enterprise has its own.
const DefaultGitHubAPI = "https://api.github.com"

// DefaultRepoName is the repository "mindmount remote github" creates.
const DefaultRepoName = "mindmount-memory"

// GitHub talks to the GitHub REST API with a token.
type GitHub struct {
	API    string // base URL; "" is DefaultGitHubAPI
	Token  string
	Client *http.Client // nil: a client with a 30s timeout
}

// ErrBadRepoName means a repository name GitHub would not accept.
var ErrBadRepoName = errors.New("invalid repository name")

// ErrBadToken means GitHub refused the token.
var ErrBadToken = errors.New("GitHub refused the token (check that it is valid and not expired, and that it may create repositories)")

func (g GitHub) do(ctx context.Context, method, path string, body any, out any) (int, error) {
	base := strings.TrimRight(g.API, "/")
	if base == "" {
		base = DefaultGitHubAPI
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+g.Token)
	req.Header.Set("Accept", "application/vnd.github+json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c := g.Client
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, scrub(fmt.Errorf("GitHub API %s %s: %w", method, path, err), g.Token)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == http.StatusUnauthorized {
		return resp.StatusCode, ErrBadToken
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Message string `json:"message"`
		}
		json.Unmarshal(data, &e)
		return resp.StatusCode, scrub(fmt.Errorf("GitHub API %s %s: %s: %s", method, path, resp.Status, memgraph.ErrorLine(e.Message)), g.Token)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("GitHub API %s %s: unexpected reply", method, path)
		}
	}
	return resp.StatusCode, nil
}

// User returns the login the token belongs to (GET /user).
func (g GitHub) User(ctx context.Context) (string, error) {
	if g.Token == "" {
		return "", errors.New("no GitHub token given")
	}
	var u struct {
		Login string `json:"login"`
	}
	if _, err := g.do(ctx, "GET", "/user", nil, &u); err != nil {
		return "", err
	}
	if u.Login == "" {
		return "", errors.New("GitHub API GET /user: no login in the reply")
	}
	return u.Login, nil
}

// Repo is a GitHub repository as far as setup cares.
type Repo struct {
	CloneURL string `json:"clone_url"`
	HTMLURL  string `json:"html_url"`
	Private  bool   `json:"private"`
	Created  bool   `json:"-"`
}

// EnsureRepo returns owner/name, creating it private (POST /user/repos)
// when it does not exist. An existing repository is reused as it is.
func (g GitHub) EnsureRepo(ctx context.Context, owner, name string) (Repo, error) {
	var r Repo
	if !validRepoName(name) {
		return r, fmt.Errorf("%w %q: use letters, digits, '-', '_' and '.'", ErrBadRepoName, name)
	}
	code, err := g.do(ctx, "GET", "/repos/"+url.PathEscape(owner)+"/"+url.PathEscape(name), nil, &r)
	if err == nil {
		return r, nil
	}
	if code != http.StatusNotFound {
		return r, err
	}
	body := map[string]any{"name": name, "private": true, "description": "mindmount memory", "auto_init": false}
	if _, err := g.do(ctx, "POST", "/user/repos", body, &r); err != nil {
		return r, err
	}
	r.Created = true
	return r, nil
}

func validRepoName(s string) bool {
	if s == "" || len(s) > 100 || s == "." || s == ".." {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// SetupResult is what SetupGitHub did.
type SetupResult struct {
	Username string
	Repo     Repo
	Sync     Result
}

// SetupGitHub checks the token, creates the private repository name (""
// is DefaultRepoName) unless it exists, makes it the sync remote, keeps
// the token in opts.Credentials.Path (when set) so daemons can push, and
// syncs once with opts (pushing the memory).
func SetupGitHub(ctx context.Context, r *gitrepo.Repo, gh GitHub, name string, opts Options) (SetupResult, error) {
	creds := opts.Credentials
	var res SetupResult
	if name == "" {
		name = DefaultRepoName
	}
	login, err := gh.User(ctx)
	if err != nil {
		return res, err
	}
	res.Username = login
	repo, err := gh.EnsureRepo(ctx, login, name)
	if err != nil {
		return res, err
	}
	res.Repo = repo
	if repo.CloneURL == "" {
		return res, errors.New("GitHub did not say the repository's clone URL")
	}
	if err := SetURL(r.Dir(), repo.CloneURL); err != nil {
		return res, err
	}
	if creds.Path != "" {
		if err := (Credentials{Path: creds.Path}).Save(repo.CloneURL, gh.Token); err != nil {
			return res, fmt.Errorf("saving the token: %w", err)
		}
	}
	st := ReadState(r)
	st.Account, st.RepoName, st.Configured = login, name, time.Now().UTC()
	writeState(r, st)
	opts.Credentials.Token = gh.Token
	s := New(r, opts)
	res.Sync, err = s.Sync(ctx)
	return res, err
}
