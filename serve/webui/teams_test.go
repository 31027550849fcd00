package webui

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/proposal"
)

// fakeDesk is the user's teams for the page's tests: eng (maintain) and
// ops (read), each with one waiting proposal; it records what it is asked
// and answers refuse when set.
type fakeDesk struct {
	mu     sync.Mutex
	asked  []string
	refuse error
}

func (d *fakeDesk) Teams() []TeamRole {
	return []TeamRole{{Name: "eng", Role: team.Maintain}, {Name: "ops", Role: team.Read}}
}

func (d *fakeDesk) Proposals(_ context.Context, name string) ([]proposal.Proposal, error) {
	return []proposal.Proposal{{Branch: proposal.Branch("pete", 1), Tip: name + "-tip-0123456789", Author: gitrepo.Author{Name: "pete"}, Paths: []string{"user_memory/" + name + "-fact.md"}}}, nil
}

func (d *fakeDesk) Timeline(name string, n int) ([]gitrepo.CommitInfo, error) {
	return []gitrepo.CommitInfo{{Hash: "0123456789abcdef0123", Subject: name + " deploys on Tuesdays", Author: gitrepo.Author{Name: "wendy"}}}, nil
}

func (d *fakeDesk) note(s string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.asked = append(d.asked, s)
	return d.refuse
}

func (d *fakeDesk) Verdict(_ context.Context, name, branch, tip string, approve bool) (string, error) {
	return "verdict given", d.note(fmt.Sprintf("verdict %s %s %s %v", name, branch, tip, approve))
}

func (d *fakeDesk) Promote(_ context.Context, name, rel string) (string, error) {
	return rel + " promoted", d.note("promote " + name + " " + rel)
}

func (d *fakeDesk) take() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	a := d.asked
	d.asked = nil
	return a
}

// TestTeamsPage: the page lists each team with the user's role and its
// proposals; approve and reject buttons only where she maintains, the
// promote form only where she may change the team; each action is asked
// of the desk as the form said, and its refusal keeps its kind (the
// role's 403, a moved proposal's 409, the team's gate 422).
func TestTeamsPage(t *testing.T) {
	dir := newRepo(t)
	rt := startRuntime(t, dir, host.RuntimeConfig{})
	d := &fakeDesk{}
	s := serveConfig(t, dir, Config{Single: rt, Teams: d})
	code, body := s.get("/teams")
	if code != http.StatusOK {
		t.Fatalf("teams: %d", code)
	}
	mustContain(t, body, "eng", "your role: maintain", "ops", "your role: read", "eng-tip-0123456789", "ops-tip-0123456789", `action="/teams/approve"`, `action="/teams/promote"`, "user_memory/likes-tea.md", "eng deploys on Tuesdays", "ops deploys on Tuesdays", "0123456789ab")
	if n := strings.Count(body, `action="/teams/approve"`); n != 1 {
		t.Fatalf("%d approve buttons, want eng's only", n)
	}
	if n := strings.Count(body, `action="/teams/promote"`); n != 1 {
		t.Fatalf("%d promote forms, want eng's only", n)
	}
	_, mem := s.get("/")
	mustContain(t, mem, `href="/teams"`)

	form := url.Values{"team": {"eng"}, "branch": {"mindmount/proposal/pete/1"}, "tip": {"eng-tip-0123456789"}, "next": {"/teams"}}
	if code, body := s.post("/teams/approve", form); code != http.StatusOK || !strings.Contains(body, "verdict given") {
		t.Fatalf("approve: %d\n%s", code, body)
	}
	if code, _ := s.post("/teams/reject", form); code != http.StatusOK {
		t.Fatalf("reject: %d", code)
	}
	if code, _ := s.post("/teams/promote", url.Values{"team": {"eng"}, "path": {"user_memory/porto.md"}, "next": {"/teams"}}); code != http.StatusOK {
		t.Fatalf("promote: %d", code)
	}
	want := []string{"verdict eng mindmount/proposal/pete/1 eng-tip-0123456789 true", "verdict eng mindmount/proposal/pete/1 eng-tip-0123456789 false", "promote eng user_memory/porto.md"}
	if got := d.take(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("asked %q, want %q", got, want)
	}
	for _, c := range []struct {
		err  error
		code int
	}{
		{fmt.Errorf("%w: pete is write", team.ErrNotMaintainer), http.StatusForbidden},
		{fmt.Errorf("%w: at abc", proposal.ErrMoved), http.StatusConflict},
		{fmt.Errorf("user_memory/x.md:3: %w", tracker.ErrSecret), http.StatusUnprocessableEntity},
		{fmt.Errorf("a socket broke"), http.StatusInternalServerError},
	} {
		d.refuse = c.err
		if code, _ := s.post("/teams/approve", form); code != c.code {
			t.Errorf("approve refused with %v: %d, want %d", c.err, code, c.code)
		}
	}
	// Without the CSRF token nothing is asked.
	d.refuse = nil
	d.take()
	if code, _ := s.post("/teams/approve", url.Values{"csrf": {"wrong"}, "team": {"eng"}}); code == http.StatusOK {
		t.Fatal("an approval without the session's CSRF token was taken")
	}
	if got := d.take(); len(got) != 0 {
		t.Fatalf("asked without CSRF: %q", got)
	}
}

// TestTeamsPageWithoutTeams: no desk, no menu link, and the actions are
// refused.
func TestTeamsPageWithoutTeams(t *testing.T) {
	dir := newRepo(t)
	s := serveRepo(t, dir, startRuntime(t, dir, host.RuntimeConfig{}))
	if _, body := s.get("/"); strings.Contains(body, `href="/teams"`) {
		t.Fatal("the menu links a teams page without teams")
	}
	if code, _ := s.post("/teams/approve", url.Values{"team": {"eng"}}); code != http.StatusConflict {
		t.Fatalf("approve without teams: %d", code)
	}
}
