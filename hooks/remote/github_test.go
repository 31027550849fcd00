package remote

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeGitHub is the part of the GitHub REST API setup uses; created
// repositories clone from the test's git server.
type fakeGitHub struct {
	cloneURL string
	mu       sync.Mutex
	repos    map[string]bool // name -> private
	posts    []map[string]any
}

func (f *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+testToken {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"message":"Bad credentials"}`))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == "GET" && r.URL.Path == "/user":
		w.Write([]byte(`{"login":"ada"}`))
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/repos/ada/"):
		name := strings.TrimPrefix(r.URL.Path, "/repos/ada/")
		private, ok := f.repos[name]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"Not Found"}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"clone_url": f.cloneURL, "private": private})
	case r.Method == "POST" && r.URL.Path == "/user/repos":
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		f.posts = append(f.posts, body)
		name, _ := body["name"].(string)
		private, _ := body["private"].(bool)
		f.repos[name] = private
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"clone_url": f.cloneURL, "private": private})
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func TestSetupGitHub(t *testing.T) {
	srv := startGitServer(t)
	fake := &fakeGitHub{cloneURL: srv.URL(), repos: map[string]bool{}}
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
	if !res.Repo.Created || res.Username != "ada" || len(fake.posts) != 1 || fake.posts[0]["private"] != true || fake.posts[0]["name"] != DefaultRepoName {
		t.Fatalf("setup: %+v posts %v", res, fake.posts)
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
	if err != nil || res.Repo.Created || len(fake.posts) != 1 {
		t.Fatalf("reuse: %+v %v posts %d", res, err, len(fake.posts))
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
	if _, err := apiFront.Setup(ctx, a.r, a.tr.Exclusive, SetupRequest{UserID: "ada-id", GitHubToken: "nope-" + testToken}); err == nil || strings.Contains(err.Error(), testToken) {
		t.Fatalf("API setup with a bad token: %v", err)
	}
	if st, err := apiFront.Update(ctx, a.r, a.tr.Exclusive, "ada-id"); err != nil || !st.Connected {
		t.Fatalf("update: %+v %v", st, err)
	}
	assertNoToken(t, a.dir, a.logs.String())
}
