package httpapi

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReviewEndpoints is review mode end to end over HTTP: with
// "merge: review" in alice's .git/mindmount/config a consolidation waits;
// GET /v1/review lists it with its facts, GET /v1/review/1 shows its diff,
// approve merges it with a merge commit, reject drops another (no memory
// change, never proposed again). Bob's token cannot touch alice's dreams.
func TestReviewEndpoints(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	dir := e.userPath("alice", "")
	os.MkdirAll(filepath.Join(dir, ".git", "mindmount"), 0o700)
	if err := os.WriteFile(filepath.Join(dir, ".git", "mindmount", "config"), []byte("merge: review\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.scriptFact("speaks-italian", "Speaks Italian", "You speak Italian.")
	code, body := e.status("POST", "/v1/consolidate?wait=1", adminKey, `{"userId":"alice","transcript":[{"role":"user","content":"I speak Italian."}]}`)
	if code != 200 || !strings.Contains(body["summary"].(string), "waits for review") {
		t.Fatalf("consolidate %d %v", code, body)
	}
	head := git(t, dir, "rev-parse", "HEAD")
	code, body = e.status("GET", "/v1/review?userId=alice", adminKey, "")
	dreams, _ := body["dreams"].([]any)
	if code != 200 || body["merge"] != "review" || len(dreams) != 1 {
		t.Fatalf("list %d %v", code, body)
	}
	d := dreams[0].(map[string]any)
	changes := d["changes"].([]any)
	if d["n"].(float64) != 1 || d["added"].(float64) != 1 || len(changes) != 1 || changes[0].(map[string]any)["fact"] != "You speak Italian." {
		t.Fatalf("dream %v", d)
	}
	code, body = e.status("GET", "/v1/review/1?userId=alice", adminKey, "")
	if code != 200 || !strings.Contains(body["diff"].(string), "+You speak Italian.") {
		t.Fatalf("show %d %v", code, body)
	}
	tip, _ := body["tip"].(string)
	if tip == "" || tip != d["tip"] {
		t.Fatalf("show's tip %q, the list's %v", tip, d["tip"])
	}
	if code, _ := e.status("GET", "/v1/review/7?userId=alice", adminKey, ""); code != http.StatusNotFound {
		t.Fatalf("an unknown dream: %d", code)
	}
	// The door's canary: bob's token reaches none of alice's dreams, and
	// none of it without credentials.
	bobTok, _, err := NewToken(e.root, "bob", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ method, path, bearer, body string }{
		{"GET", "/v1/review?userId=alice", bobTok, ""},
		{"GET", "/v1/review/1?userId=alice", bobTok, ""},
		{"POST", "/v1/review/1/approve", bobTok, `{"userId":"alice"}`},
		{"POST", "/v1/review/1/reject", bobTok, `{"userId":"alice"}`},
		{"POST", "/v1/review/1/approve", "", `{"userId":"alice"}`},
	} {
		if code, _ := e.status(r.method, r.path, r.bearer, r.body); code != http.StatusForbidden && code != http.StatusUnauthorized {
			t.Fatalf("%s %s with %q: %d", r.method, r.path, r.bearer, code)
		}
	}
	if git(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("a refused request changed alice's repository")
	}
	// Approve merges the tip shown, or nothing: without a tip, 400; with
	// another, 409.
	if code, body := e.status("POST", "/v1/review/1/approve", adminKey, `{"userId":"alice"}`); code != http.StatusBadRequest {
		t.Fatalf("approve without a tip: %d %v", code, body)
	}
	if code, body := e.status("POST", "/v1/review/1/approve", adminKey, `{"userId":"alice","tip":"0123456789abcdef"}`); code != http.StatusConflict {
		t.Fatalf("approve with another tip: %d %v", code, body)
	}
	if git(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("a refused approval changed alice's repository")
	}
	code, body = e.status("POST", "/v1/review/1/approve", adminKey, `{"userId":"alice","tip":"`+tip+`"}`)
	if code != 200 || body["status"] != "merged" {
		t.Fatalf("approve %d %v", code, body)
	}
	if strings.TrimSpace(git(t, dir, "rev-parse", "HEAD^2")) != tip {
		t.Fatal("the merge is not of the tip shown")
	}
	if got := git(t, dir, "branch", "--list", "mindmount/*"); got != "" {
		t.Fatalf("the approved dream's branch stays: %q", got)
	}
	if ps := strings.Fields(git(t, dir, "log", "-1", "--format=%P")); len(ps) != 2 || git(t, dir, "rev-parse", "HEAD^1") != head {
		t.Fatalf("approve made no merge on main: %v", ps)
	}
	if !strings.Contains(e.readFile("alice", "user_memory/speaks-italian.md"), "You speak Italian.") {
		t.Fatal("the approved memory is not there")
	}

	e.scriptFact("is-a-pilot", "Is a pilot", "You are a pilot.")
	e.status("POST", "/v1/consolidate?wait=1", adminKey, `{"userId":"alice","transcript":[{"role":"user","content":"I am a pilot, ha ha."}]}`)
	before := git(t, dir, "ls-tree", "-r", "HEAD", "user_memory")
	code, body = e.status("POST", "/v1/review/2/reject", adminKey, `{"userId":"alice","reason":"a joke"}`)
	if code != 200 || body["status"] != "rejected" {
		t.Fatalf("reject %d %v", code, body)
	}
	if git(t, dir, "ls-tree", "-r", "HEAD", "user_memory") != before {
		t.Fatal("a rejection changed memories")
	}
	if msg := git(t, dir, "log", "-1", "--format=%B"); !strings.Contains(msg, "Mindmount-Reason: a joke") {
		t.Fatalf("rejection commit:\n%s", msg)
	}
	code, body = e.status("POST", "/v1/bye?wait=1", adminKey, `{"userId":"alice"}`)
	if code != 200 || body["summary"] != "nothing new to consolidate" {
		t.Fatalf("the rejected transcript was proposed again: %d %v", code, body)
	}
	code, body = e.status("GET", "/v1/review?userId=alice", adminKey, "")
	if dreams, _ := body["dreams"].([]any); code != 200 || len(dreams) != 0 {
		t.Fatalf("after the verdicts %d %v", code, body)
	}
}
