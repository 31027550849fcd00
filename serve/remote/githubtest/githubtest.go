// Package githubtest is a fake of the part of GitHub's REST API that
// mindmount's GitHub setup uses (serve/remote.SetupGitHub): who the token
// belongs to, a repository's clone URL and visibility, and creating a
// repository. Created repositories clone from a git server the test runs.
package githubtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
)

// Server answers as GitHub would for the token Token of the user Login.
// The repository Leaky, when set, answers 403 with a message that quotes
// the token, as careless servers do, so that scrubbing is tested end to
// end.
type Server struct {
	Token    string
	Login    string
	CloneURL string // every repository's clone_url
	Leaky    string

	mu    sync.Mutex
	repos map[string]bool // name -> private
	posts []map[string]any
	calls int
}

func (f *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if r.Header.Get("Authorization") != "Bearer "+f.Token {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"message":"Bad credentials"}`))
		return
	}
	if f.repos == nil {
		f.repos = map[string]bool{}
	}
	prefix := "/repos/" + f.Login + "/"
	switch {
	case r.Method == "GET" && r.URL.Path == "/user":
		json.NewEncoder(w).Encode(map[string]string{"login": f.Login})
	case r.Method == "GET" && f.Leaky != "" && r.URL.Path == prefix+f.Leaky:
		w.WriteHeader(http.StatusForbidden)
		json.NewEncoder(w).Encode(map[string]string{"message": "token " + f.Token + " lacks the repo scope"})
	case r.Method == "GET" && strings.HasPrefix(r.URL.Path, prefix):
		private, ok := f.repos[strings.TrimPrefix(r.URL.Path, prefix)]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"Not Found"}`))
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"clone_url": f.CloneURL, "private": private})
	case r.Method == "POST" && r.URL.Path == "/user/repos":
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		f.posts = append(f.posts, body)
		name, _ := body["name"].(string)
		private, _ := body["private"].(bool)
		f.repos[name] = private
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]any{"clone_url": f.CloneURL, "private": private})
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// Snapshot returns how many requests arrived and the bodies of the
// repository creations, in order.
func (f *Server) Snapshot() (calls int, posts []map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, append([]map[string]any(nil), f.posts...)
}
