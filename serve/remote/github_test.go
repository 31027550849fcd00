package remote

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/serve/remote/githubtest"
)

func TestSetupGitHub(t *testing.T) {
	srv := startGitServer(t)
	fake := &githubtest.Server{Token: testToken, Login: "ada", CloneURL: srv.URL()}
	api := httptest.NewServer(fake)
	defer api.Close()
	a := newNode(t, seed)
	credPath := t.TempDir() + "/credentials"
	ctx := context.Background()

	// A bad token: a clear error, nothing configured, the token nowhere.
	_, err := SetupGitHub(ctx, a.r, GitHub{API: api.URL, Token: "wrong-" + testToken}, "", Options{Credentials: Credentials{Path: credPath}})
	if !errors.Is(err, ErrBadToken) || !strings.Contains(err.Error(), "GitHub refused the token") {
		t.Fatalf("bad token: %v", err)
	}
	if _, err := URL(a.dir); !errors.Is(err, ErrNoRemote) {
		t.Fatal("remote set despite a bad token")
	}
	assertNoToken(t, a.dir, err.Error())

	// First setup creates a private repository and pushes.
	res, err := SetupGitHub(ctx, a.r, GitHub{API: api.URL, Token: testToken}, "", Options{Credentials: Credentials{Path: credPath}})
	if err != nil {
		t.Fatal(err)
	}
	if _, posts := fake.Snapshot(); !res.Repo.Created || res.Username != "ada" || len(posts) != 1 || posts[0]["private"] != true || posts[0]["name"] != DefaultRepoName {
		t.Fatalf("setup: %+v posts %v", res, posts)
	}
	head := a.git("rev-parse", "HEAD")
	if got := mustRun(t, srv.bare, "git", "rev-parse", "main"); got != head {
		t.Fatalf("not pushed: remote %s, local %s", got, head)
	}
	// The token went to the credentials file (0600), not the repository.
	if tok, err := (Credentials{Path: credPath}).Lookup(srv.URL()); err != nil || tok != testToken {
		t.Fatalf("credentials file: %q %v", tok, err)
	}

	// Second setup reuses the repository.
	res, err = SetupGitHub(ctx, a.r, GitHub{API: api.URL, Token: testToken}, "", Options{Credentials: Credentials{Path: credPath}})
	if _, posts := fake.Snapshot(); err != nil || res.Repo.Created || len(posts) != 1 {
		t.Fatalf("reuse: %+v %v posts %d", res, err, len(posts))
	}

	// The HTTP API shapes.
	apiFront := API{GitHubAPI: api.URL, Credentials: func(string) Credentials { return Credentials{Path: credPath} }}
	st := apiFront.Status(a.r, "ada-id")
	if !st.Connected || st.GitHubUsername != "ada" || st.RepoURL != srv.URL() || st.LastPush == nil {
		t.Fatalf("status: %+v", st)
	}
	b, _ := json.Marshal(st)
	for _, k := range []string{`"userId"`, `"connected"`, `"github_username"`, `"repo_url"`, `"last_push"`} {
		if !strings.Contains(string(b), k) {
			t.Fatalf("reply lacks %s: %s", k, b)
		}
	}
	if _, err := apiFront.Setup(ctx, a.r, a.tr, SetupRequest{UserID: "ada-id", GitHubToken: "nope-" + testToken}); err == nil || strings.Contains(err.Error(), testToken) {
		t.Fatalf("API setup with a bad token: %v", err)
	}
	if st, err := apiFront.Update(ctx, a.r, a.tr, "ada-id"); err != nil || !st.Connected {
		t.Fatalf("update: %+v %v", st, err)
	}
	assertNoToken(t, a.dir, a.logs.String())
}
