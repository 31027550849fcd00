package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/memgraph/team"
)

// opsUID is the team ops's uid and group in these tests.
const opsUID = 2351

// The canary of each user's personal memory and of each team: single
// words, so each is a query of its own and a door that shows one is
// easy to catch.
var doorCanaries = map[string]string{
	"alice": "canaryalicequx",
	"bob":   "canarybobvex",
	"carol": "canarycarolzim",
	"eng":   "canaryengjaw",
	"ops":   "canaryopskef",
}

// canaryMemory is a memory whose description and fact carry word.
func canaryMemory(word string) string {
	return "---\ndescription: Notes " + word + "\n---\n# Notes\n\n## Fact\nThe notes say " + word + ".\n\n## Access log\n"
}

// teamCommit writes rel into the team repository dir and commits it as
// the team's writer does: as the team's uid (setpriv), never as root.
func teamCommit(t *testing.T, dir string, uid int, rel, content string) {
	t.Helper()
	script := `set -e; cd "$1"; mkdir -p "$(dirname "$2")"; printf '%s' "$3" > "$2"; git add -- "$2"; git commit -qm "add $2"`
	out, err := as(uid, "env", "HOME=/nonexistent", "sh", "-c", script, "sh", dir, rel, content)
	if err != nil {
		t.Fatalf("commit %s as the team's uid %d: %v\n%s", rel, uid, err, out)
	}
}

// addOps adds the team ops (carol alone, write) with its canary.
func addOps(t *testing.T, root string) {
	t.Helper()
	dir := filepath.Join(root, team.Dir, "ops")
	runCmd(t, "init", dir)
	runCmd(t, "teams", "add", root, "ops", "--uid", itoa(opsUID))
	teamCommit(t, dir, opsUID, "user_memory/ops-canary.md", canaryMemory(doorCanaries["ops"]))
	runCmd(t, "teams", "member", root, "ops", "carol", "--role", "write")
}

// TestServeTeamRefresh: a memory the team's writer commits into eng while
// the members' workers run reaches alice's grep -r over her mount, her
// .mindmount/search and her mindmount recall (through her worker), and
// the indexes, without a restart of her worker.
func TestServeTeamRefresh(t *testing.T) {
	requireRootFUSE(t)
	root, engDir := serveTeamRoot(t)
	s := startServe(t, root, serveOpts{})
	alice := filepath.Join(s.mnt, "alice")
	waitAs(t, s, aliceUID, "cat "+alice+"/shared/eng/user_memory/eng-canary.md", func(_ string, err error) bool { return err == nil })
	pid := workerOf(t, "alice", root)
	word := "canaryrefreshyak"
	teamCommit(t, engDir, engUID, "user_memory/deploys/fresh.md", canaryMemory(word))
	// grep's status is 2 for what the team's group may not read (the
	// team's inbox, parts of its .git): only what it finds matters.
	took := waitAs(t, s, aliceUID, "grep -rl "+word+" "+alice+"/shared", func(out string, _ error) bool {
		return strings.Contains(out, "shared/eng/user_memory/deploys/fresh.md")
	})
	t.Logf("grep -r found the new team memory after %v", took)
	took = waitAs(t, s, aliceUID, "cat '"+alice+"/.mindmount/search/"+word+"'", func(out string, err error) bool {
		return err == nil && strings.Contains(out, "shared/eng/user_memory/deploys/fresh.md")
	})
	t.Logf(".mindmount/search found it after %v", took)
	bin := userBinary(t)
	out, err := as(aliceUID, "env", "HOME=/nonexistent", "MINDMOUNT_DEBUG=1", bin, "recall", filepath.Join(root, "users/alice"), word, "--json")
	if err != nil || !strings.Contains(out, "answered by the daemon") || !strings.Contains(out, "shared/eng/user_memory/deploys/fresh.md") {
		t.Fatalf("alice's recall through her worker: %v\n%s\n%s", err, out, s.logs)
	}
	for _, f := range []string{"CONTEXT.md", "user_memory.md"} {
		if out, err := as(aliceUID, "cat", filepath.Join(alice, f)); err != nil || !strings.Contains(out, "shared/eng/user_memory/deploys/fresh.md") {
			t.Errorf("alice's %s does not list the new team memory: %v\n%s", f, err, out)
		}
	}
	if now := workerOf(t, "alice", root); now != pid {
		t.Fatalf("alice's worker was restarted (%d -> %d): the refresh must not need it", pid, now)
	}
}

// doorRig is a running serve (mount and HTTP, the fake model) with
// alice, bob and carol, the teams eng and ops, and every canary in
// place.
type doorRig struct {
	t      *testing.T
	s      *served
	base   string
	model  *llmtest.Server
	bin    string
	tokens map[string]string
	uids   map[string]int
	nonce  int
}

func startDoorRig(t *testing.T) *doorRig {
	t.Helper()
	root, engDir := serveTeamRoot(t)
	teamCommit(t, engDir, engUID, "user_memory/eng-doors.md", canaryMemory(doorCanaries["eng"]))
	addOps(t, root)
	r := &doorRig{t: t, model: llmtest.New(t), bin: userBinary(t), tokens: map[string]string{},
		uids: map[string]int{"alice": aliceUID, "bob": bobUID, "carol": carolUID}}
	for id := range r.uids {
		r.tokens[id] = strings.TrimSpace(runCmd(t, "users", "token", root, id))
	}
	env := []string{"MINDMOUNT_LLM=ollama", "OLLAMA_HOST=" + r.model.OllamaURL(), "MINDMOUNT_MODEL=fake", "MINDMOUNT_API_KEY="}
	r.s, r.base = startServeMountHTTP(t, root, env, "--debounce", "50ms", "--max-wait", "50ms")
	for id, uid := range r.uids {
		writeAs(t, uid, filepath.Join(r.s.mnt, id, "user_memory/doors-canary.md"), canaryMemory(doorCanaries[id]))
	}
	return r
}

// doorsOf lists every door a user asks for a query within scope sel ("":
// each door's default, every scope; the chat has no other): each
// returns what the user gets back, or an error when the door did not
// answer (a worker restarting after a membership change, a scope
// refused).
func (r *doorRig) doorsOf(id, sel string) map[string]func(q string) (string, error) {
	uid, tok := r.uids[id], r.tokens[id]
	mnt := filepath.Join(r.s.mnt, id)
	scoped := func(flag string) []string {
		if sel == "" {
			return nil
		}
		return []string{flag, sel}
	}
	doors := map[string]func(string) (string, error){
		"search file": func(q string) (string, error) {
			if sel != "" {
				q = "@" + sel + " " + q
			}
			return as(uid, "cat", mnt+"/.mindmount/search/"+q)
		},
		"mindmount recall": func(q string) (string, error) {
			args := append([]string{"env", "HOME=/nonexistent", "MINDMOUNT_DEBUG=1", r.bin, "recall", filepath.Join(r.s.root, "users", id), q, "--json"}, scoped("--scope")...)
			out, err := as(uid, args...)
			if err == nil && !strings.Contains(out, "answered by the daemon") {
				err = fmt.Errorf("not answered by the worker")
			}
			return out, err
		},
		"/v1/recall": func(q string) (string, error) {
			return r.get("/v1/recall?userId="+id+"&k=20&scope="+url.QueryEscape(sel)+"&q="+url.QueryEscape(q), tok)
		},
		"MCP recall": func(q string) (string, error) { return r.mcpRecall(tok, q, sel) },
		"web search": func(q string) (string, error) {
			return r.page(id, tok, "/search?q="+url.QueryEscape(q)+"&scope="+url.QueryEscape(sel))
		},
	}
	if sel == "" {
		doors["chat prompt"] = func(q string) (string, error) { return r.chatPrompt(id, tok, q) }
	}
	return doors
}

// get is an HTTP GET with a bearer token; a status other than 200 is an
// error.
func (r *doorRig) get(path, tok string) (string, error) {
	req, _ := http.NewRequest("GET", r.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	return r.do(http.DefaultClient, req)
}

func (r *doorRig) do(c *http.Client, req *http.Request) (string, error) {
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return string(b), fmt.Errorf("%s: %d", req.URL.Path, resp.StatusCode)
	}
	return string(b), nil
}

type bearerRT struct{ tok string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpRecall calls the recall tool of the server's HTTP MCP as the
// token's user.
func (r *doorRig) mcpRecall(tok, q, sel string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := mcp.NewClient(&mcp.Implementation{Name: "doors", Version: "1"}, nil)
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.base + "/mcp", HTTPClient: &http.Client{Transport: bearerRT{tok}}, MaxRetries: -1}, nil)
	if err != nil {
		return "", err
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "recall", Arguments: map[string]any{"query": q, "k": 20, "scope": sel}})
	if err != nil {
		return "", err
	}
	if res.IsError {
		return toolText(res), fmt.Errorf("recall tool: %s", toolText(res))
	}
	return toolText(res), nil
}

// chatPrompt sends q in a chat and returns the system prompt the model
// was given for it.
func (r *doorRig) chatPrompt(id, tok, q string) (string, error) {
	r.nonce++
	msg := fmt.Sprintf("door%d what about %s", r.nonce, q)
	body, _ := json.Marshal(map[string]string{"userId": id, "message": msg, "sessionId": "doors"})
	req, _ := http.NewRequest("POST", r.base+"/v1/chat", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+tok)
	if _, err := r.do(http.DefaultClient, req); err != nil {
		return "", err
	}
	for _, c := range r.model.Calls() {
		if c.Kind == llmtest.KindOther && strings.Contains(c.Prompt, msg) {
			return c.System, nil
		}
	}
	return "", fmt.Errorf("the model got no call for %q", msg)
}

var loginCSRFRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// page logs in to the web page with the user's token and GETs one of the
// user's pages.
func (r *doorRig) page(id, tok, path string) (string, error) {
	c := uiClient()
	login, err := r.do(c, mustReq("GET", r.base+"/ui/login", ""))
	m := loginCSRFRe.FindStringSubmatch(login)
	if err != nil || m == nil {
		return login, fmt.Errorf("no login form: %v", err)
	}
	req := mustReq("POST", r.base+"/ui/login", url.Values{"csrf": {m[1]}, "token": {tok}}.Encode())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", r.base)
	if _, err := r.do(c, req); err != nil {
		return "", err
	}
	return r.do(c, mustReq("GET", r.base+"/ui/u/"+id+path, ""))
}

func mustReq(method, u, body string) *http.Request {
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	return req
}

// foreign returns the first canary out holds that is not in want.
func foreign(out string, want []string) string {
	for _, c := range doorCanaries {
		if !slices.Contains(want, c) && strings.Contains(out, c) {
			return c
		}
	}
	return ""
}

// ask asks one door of user id for q until it answers: what it shows
// must never hold a canary outside want, and must hold q when q is one
// of want's (so the check can fail). The question is the canary in
// capitals (recall folds case): a door that repeats the question ("no
// memory matches …", the page's search box) does not show the canary
// itself. Only a hang (a minute) is waited out.
func (r *doorRig) ask(id, door string, ask func(string) (string, error), q string, want []string) {
	r.t.Helper()
	start := time.Now()
	for {
		out, err := ask(strings.ToUpper(q))
		if c := foreign(out, want); c != "" {
			r.t.Fatalf("%s's %s for %q shows %s, of a user or team %s does not belong to:\n%s", id, door, q, c, id, out)
		}
		if err == nil && (!slices.Contains(want, q) || strings.Contains(out, q)) {
			return
		}
		if time.Since(start) > time.Minute {
			r.t.Fatalf("a minute asking %s's %s for %q: %v\n%s\n%s", id, door, q, err, out, r.s.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// mountCanaries is every canary user id's grep -r over the whole of her
// mount finds (her inbox left out: what she typed in a chat is hers).
func (r *doorRig) mountCanaries(id string) []string {
	args := []string{"grep", "-rIoh", "--exclude-dir=transcripts"}
	for _, c := range doorCanaries {
		args = append(args, "-e", c)
	}
	out, _ := as(r.uids[id], append(args, filepath.Join(r.s.mnt, id))...)
	var got []string
	for _, l := range strings.Fields(out) { // grep's complaints (EACCES) left out
		if slices.Contains(slices.Collect(maps.Values(doorCanaries)), l) && !slices.Contains(got, l) {
			got = append(got, l)
		}
	}
	slices.Sort(got)
	return got
}

// checkDoors asks every door of every user for every canary; teams says
// which teams each user belongs to now.
func (r *doorRig) checkDoors(teams map[string][]string) {
	r.t.Helper()
	for _, id := range []string{"alice", "bob", "carol"} {
		want := []string{doorCanaries[id]}
		for _, tm := range teams[id] {
			want = append(want, doorCanaries[tm])
		}
		slices.Sort(want)
		start := time.Now()
		for got := r.mountCanaries(id); !slices.Equal(got, want); got = r.mountCanaries(id) {
			if c := foreign(strings.Join(got, " "), want); c != "" {
				r.t.Fatalf("%s's grep -r over her mount finds %s (all: %v, want %v)", id, c, got, want)
			}
			if time.Since(start) > time.Minute {
				r.t.Fatalf("%s's grep -r over her mount: %v, want %v\n%s", id, got, want, r.s.logs)
			}
			time.Sleep(50 * time.Millisecond)
		}
		doors := r.doorsOf(id, "")
		names := make([]string, 0, len(doors))
		for n := range doors {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			for _, q := range doorCanaries {
				r.ask(id, n, doors[n], q, want)
			}
		}
		// The web page's list of memories: hers, none of anyone else's.
		r.ask(id, "web page", func(string) (string, error) { return r.page(id, r.tokens[id], "/") }, doorCanaries[id], want)
		r.crossDoors(id, want)
	}
}

// crossDoors: the doors that name a user (/v1/recall, the chat, the web
// page) refuse id's credentials for every other user, and what they
// answer holds no canary outside want.
func (r *doorRig) crossDoors(id string, want []string) {
	r.t.Helper()
	tok := r.tokens[id]
	for other := range r.uids {
		if other == id {
			continue
		}
		q := strings.ToUpper(doorCanaries[other])
		for door, ask := range map[string]func() (string, error){
			"/v1/recall": func() (string, error) { return r.get("/v1/recall?userId="+other+"&q="+url.QueryEscape(q), tok) },
			"chat": func() (string, error) {
				body, _ := json.Marshal(map[string]string{"userId": other, "message": "what about " + q, "sessionId": "cross"})
				req := mustReq("POST", r.base+"/v1/chat", string(body))
				req.Header.Set("Authorization", "Bearer "+tok)
				return r.do(http.DefaultClient, req)
			},
			"web search": func() (string, error) { return r.page(other, tok, "/search?q="+url.QueryEscape(q)) },
		} {
			out, err := ask()
			if c := foreign(out, want); err == nil || c != "" {
				r.t.Fatalf("%s's credentials at %s of %s: %v, shows %q:\n%s", id, door, other, err, c, out)
			}
		}
	}
}

// TestServeTeamDoorsCanaries: three users (alice and bob in eng, carol in
// ops), each user's memory and each team carrying a canary word; every
// door — grep -r over the mount, .mindmount/search, mindmount recall
// through the worker, MCP over HTTP, /v1/recall, the chat's system
// prompt as the model gets it, the web page — asked by each user for
// every canary shows no canary of a user or team they do not belong to,
// and each member finds its own and its teams'; again after carol joins
// eng, and after she leaves it.
func TestServeTeamDoorsCanaries(t *testing.T) {
	requireRootFUSE(t)
	r := startDoorRig(t)
	root := r.s.root
	r.checkDoors(map[string][]string{"alice": {"eng"}, "bob": {"eng"}, "carol": {"ops"}})
	r.checkTeamsPages(map[string][]string{"alice": {"eng"}, "bob": {"eng"}, "carol": {"ops"}})

	runCmd(t, "teams", "member", root, "eng", "carol", "--role", "read")
	r.checkDoors(map[string][]string{"alice": {"eng"}, "bob": {"eng"}, "carol": {"eng", "ops"}})

	runCmd(t, "teams", "member", root, "eng", "carol", "--remove")
	took := waitAs(t, r.s, carolUID, "ls "+filepath.Join(r.s.mnt, "carol/shared/eng"), func(_ string, err error) bool { return err != nil })
	t.Logf("carol removed: shared/eng refused after %v", took)
	r.checkDoors(map[string][]string{"alice": {"eng"}, "bob": {"eng"}, "carol": {"ops"}})
	if strings.Contains(r.s.logs.String(), doorCanaries["eng"]) {
		t.Fatalf("the daemon's log holds eng's canary")
	}
}

// TestServeTeamRecallScope: every recall door of serve that takes a scope
// (.mindmount/search/@SCOPE, mindmount recall --scope, /v1/recall's
// scope, MCP's recall scope, the web page's search) honours it: asked
// for both alice's canary and eng's, personal finds hers alone, eng
// eng's alone, all both; ops, a team she is not in, is refused at every
// door and shows nothing of it.
func TestServeTeamRecallScope(t *testing.T) {
	requireRootFUSE(t)
	r := startDoorRig(t)
	mine, eng := doorCanaries["alice"], doorCanaries["eng"]
	q := strings.ToUpper(mine + " " + eng)
	for sel, want := range map[string][]string{"personal": {mine}, "eng": {eng}, "all": {mine, eng}} {
		for name, door := range r.doorsOf("alice", sel) {
			start := time.Now()
			for {
				out, err := door(q)
				if c := foreign(out, want); c != "" {
					t.Fatalf("alice's %s with scope %s shows %s:\n%s", name, sel, c, out)
				}
				if err == nil && strings.Contains(out, want[0]) && strings.Contains(out, want[len(want)-1]) {
					break
				}
				if time.Since(start) > time.Minute {
					t.Fatalf("a minute asking alice's %s with scope %s: %v\n%s", name, sel, err, out)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	for name, door := range r.doorsOf("alice", "ops") {
		out, err := door(strings.ToUpper(doorCanaries["ops"]))
		// The search file answers a refusal in its text (a read has no
		// room for a reason).
		refused := err != nil || strings.Contains(out, "no such scope")
		if !refused || foreign(out, []string{mine, eng}) != "" {
			t.Errorf("alice's %s with scope ops (not her team): %v\n%s", name, err, out)
		}
	}
}

// checkTeamsPages: each user's teams page (the web page's /teams, asked
// of her worker) lists her teams and no other.
func (r *doorRig) checkTeamsPages(member map[string][]string) {
	r.t.Helper()
	for id, teams := range member {
		body, err := r.page(id, r.tokens[id], "/teams")
		if err != nil {
			r.t.Fatalf("%s's teams page: %v\n%s", id, err, body)
		}
		for _, name := range []string{"eng", "ops"} {
			if shown := strings.Contains(body, "<h2>"+name+" <span"); shown != slices.Contains(teams, name) {
				r.t.Fatalf("%s's teams page shows %s: %v, a member: %v\n%s", id, name, shown, !shown, body)
			}
			// Its timeline, read by the member's worker through the team's group.
			if shown := strings.Contains(body, "add user_memory/"+name+"-"); shown != slices.Contains(teams, name) {
				r.t.Fatalf("%s's teams page shows %s's timeline: %v\n%s", id, name, shown, body)
			}
		}
	}
}
