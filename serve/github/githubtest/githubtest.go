// Package githubtest is a fake of the part of a hosting service's REST API
// that serve/github uses — pull requests (list, create, files, review
// comments), issues and their comments (read, create, edit) — recording
// what was posted. Its pull requests into a branch of a bare git
// repository really merge there (Merge), as the service would.
package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Comment is a comment of an issue or pull request.
type Comment struct {
	ID     int64  `json:"id"`
	Body   string `json:"body"`
	Number int    `json:"-"`
}

// PR is a pull request the fake holds.
type PR struct {
	Number         int
	Title, Body    string
	Head, Base     string
	HeadSHA        string
	State          string // "open" or "closed"
	Merged         bool
	Files          []string
	ReviewComments []string
}

// Server is the fake. Bare is the git repository pull requests merge in.
type Server struct {
	*httptest.Server
	Token, Owner, Repo string
	Bare               string

	mu       sync.Mutex
	prs      map[int]*PR
	issues   map[int]string // number -> title
	comments []*Comment
	nextID   int64
	next     int
	Posts    []string // "POST /path" and "PATCH /path", in order
}

// New starts a fake for owner/repo with token; it stops with the test.
func New(t interface{ Cleanup(func()) }, token, owner, repo, bare string) *Server {
	s := &Server{Token: token, Owner: owner, Repo: repo, Bare: bare, prs: map[int]*PR{}, issues: map[int]string{}, next: 1}
	s.Server = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// AddPR registers a pull request of the project's code (number n).
func (s *Server) AddPR(n int, title, body string, files, reviewComments []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prs[n] = &PR{Number: n, Title: title, Body: body, Head: "feature-" + strconv.Itoa(n), Base: "main", State: "open",
		Files: files, ReviewComments: reviewComments}
	if n >= s.next {
		s.next = n + 1
	}
}

// AddIssue registers an issue.
func (s *Server) AddIssue(n int, title string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.issues[n] = title
	if n >= s.next {
		s.next = n + 1
	}
}

// PRs returns a copy of every pull request, by number.
func (s *Server) PRs() []PR {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PR
	for _, p := range s.prs {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// Comments returns the comments of issue or pull request n.
func (s *Server) Comments(n int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.comments {
		if c.Number == n {
			out = append(out, *c)
		}
	}
	return out
}

// Writes returns a copy of Posts: every write request so far, in order.
func (s *Server) Writes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.Posts...)
}

// Close closes pull request n without merging it.
func (s *Server) ClosePR(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.prs[n]; p != nil {
		p.State = "closed"
	}
}

// Merge merges pull request n into its base in Bare with a merge commit,
// as the service's merge button does, and closes it.
func (s *Server) Merge(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.prs[n]
	if p == nil || p.State != "open" {
		return fmt.Errorf("pull request %d is not open", n)
	}
	tmp, err := os.MkdirTemp("", "githubtest-merge")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, "w")
	steps := [][]string{
		{"clone", "-q", "--branch", p.Base, s.Bare, work},
		{"-C", work, "fetch", "-q", "origin", "refs/heads/" + p.Head + ":refs/remotes/origin/" + p.Head},
		{"-C", work, "-c", "user.name=fake", "-c", "user.email=fake@example.com", "merge", "-q", "--no-ff", "-m",
			fmt.Sprintf("Merge pull request #%d from %s", n, p.Head), "origin/" + p.Head},
		{"-C", work, "push", "-q", "origin", p.Base},
	}
	for _, a := range steps {
		cmd := exec.Command("git", a...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", a[0], err, out)
		}
	}
	p.State, p.Merged = "closed", true
	return nil
}

var (
	rePulls     = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls$`)
	rePullSub   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/pulls/([0-9]+)/(files|comments)$`)
	reIssue     = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/([0-9]+)$`)
	reIssueCmts = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/([0-9]+)/comments$`)
	reComment   = regexp.MustCompile(`^/repos/([^/]+)/([^/]+)/issues/comments/([0-9]+)$`)
)

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		reply(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
		return
	}
	p := strings.TrimPrefix(r.URL.Path, "/api/v3")
	if r.Method != http.MethodGet {
		s.Posts = append(s.Posts, r.Method+" "+p)
	}
	for _, re := range []*regexp.Regexp{rePulls, rePullSub, reIssue, reIssueCmts, reComment} {
		if m := re.FindStringSubmatch(p); m != nil && (m[1] != s.Owner || m[2] != s.Repo) {
			reply(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
	}
	switch m := matchAll(p); {
	case m.re == rePulls && r.Method == http.MethodGet:
		s.listPulls(w, r)
	case m.re == rePulls && r.Method == http.MethodPost:
		s.createPull(w, r)
	case m.re == rePullSub && r.Method == http.MethodGet:
		s.pullSub(w, m.n, m.sub)
	case m.re == reIssue && r.Method == http.MethodGet:
		s.getIssue(w, m.n)
	case m.re == reIssueCmts && r.Method == http.MethodGet:
		var out []*Comment
		for _, c := range s.comments {
			if c.Number == m.n {
				out = append(out, c)
			}
		}
		reply(w, http.StatusOK, out)
	case m.re == reIssueCmts && r.Method == http.MethodPost:
		var c Comment
		json.NewDecoder(r.Body).Decode(&c)
		s.nextID++
		c.ID, c.Number = s.nextID, m.n
		s.comments = append(s.comments, &c)
		reply(w, http.StatusCreated, c)
	case m.re == reComment && r.Method == http.MethodPatch:
		var in Comment
		json.NewDecoder(r.Body).Decode(&in)
		for _, c := range s.comments {
			if c.ID == int64(m.n) {
				c.Body = in.Body
				reply(w, http.StatusOK, c)
				return
			}
		}
		reply(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	default:
		reply(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	}
}

type match struct {
	re  *regexp.Regexp
	n   int
	sub string
}

func matchAll(p string) match {
	for _, re := range []*regexp.Regexp{rePulls, rePullSub, reIssue, reIssueCmts, reComment} {
		if m := re.FindStringSubmatch(p); m != nil {
			out := match{re: re}
			if len(m) > 3 {
				out.n, _ = strconv.Atoi(m[3])
			}
			if len(m) > 4 {
				out.sub = m[4]
			}
			return out
		}
	}
	return match{}
}

func (s *Server) pullJSON(p *PR) map[string]any {
	out := map[string]any{"number": p.Number, "title": p.Title, "body": p.Body, "state": p.State, "merged": p.Merged,
		"html_url": fmt.Sprintf("https://github.example/%s/%s/pull/%d", s.Owner, s.Repo, p.Number),
		"head":     map[string]any{"ref": p.Head, "sha": p.HeadSHA}, "base": map[string]any{"ref": p.Base}}
	if p.Merged {
		out["merged_at"] = "2026-12-07T12:00:00Z"
	}
	return out
}

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request) {
	state, base := r.URL.Query().Get("state"), r.URL.Query().Get("base")
	var out []map[string]any
	nums := make([]int, 0, len(s.prs))
	for n := range s.prs {
		nums = append(nums, n)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(nums)))
	for _, n := range nums {
		p := s.prs[n]
		if (base != "" && p.Base != base) || (state != "all" && p.State != "open") {
			continue
		}
		out = append(out, s.pullJSON(p))
	}
	reply(w, http.StatusOK, out)
}

func (s *Server) createPull(w http.ResponseWriter, r *http.Request) {
	var in struct{ Title, Body, Head, Base string }
	json.NewDecoder(r.Body).Decode(&in)
	cmd := exec.Command("git", "-C", s.Bare, "rev-parse", "--verify", "refs/heads/"+in.Head)
	sha, err := cmd.Output()
	if err != nil {
		reply(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed: no branch " + in.Head})
		return
	}
	p := &PR{Number: s.next, Title: in.Title, Body: in.Body, Head: in.Head, Base: in.Base, HeadSHA: strings.TrimSpace(string(sha)), State: "open"}
	s.next++
	s.prs[p.Number] = p
	reply(w, http.StatusCreated, s.pullJSON(p))
}

func (s *Server) pullSub(w http.ResponseWriter, n int, sub string) {
	p := s.prs[n]
	if p == nil {
		reply(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	var out []map[string]any
	if sub == "files" {
		for _, f := range p.Files {
			out = append(out, map[string]any{"filename": f})
		}
	} else {
		for i, c := range p.ReviewComments {
			out = append(out, map[string]any{"id": i + 1, "body": c, "path": "file"})
		}
	}
	reply(w, http.StatusOK, out)
}

func (s *Server) getIssue(w http.ResponseWriter, n int) {
	if t, ok := s.issues[n]; ok {
		reply(w, http.StatusOK, map[string]any{"number": n, "title": t})
		return
	}
	if p, ok := s.prs[n]; ok {
		reply(w, http.StatusOK, map[string]any{"number": n, "title": p.Title, "pull_request": map[string]any{}})
		return
	}
	reply(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
}

func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
