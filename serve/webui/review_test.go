package webui

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/serve/host"
)

// TestReviewOnTheStatusPage: with merge: review, a waiting dream is on the
// status page with its facts; approve merges it (a merge commit), reject
// drops another without changing a memory.
func TestReviewOnTheStatusPage(t *testing.T) {
	dir := newRepo(t)
	os.MkdirAll(filepath.Join(dir, ".git", "mindmount"), 0o700)
	if err := os.WriteFile(filepath.Join(dir, ".git", "mindmount", "config"), []byte("merge: review\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New(t)
	rt := startRuntime(t, dir, host.RuntimeConfig{Consolidate: true, Idle: time.Hour, Every: 1 << 20, Provider: llm.NewOllama(model.OllamaURL(), "fake")})
	s := serveRepo(t, dir, rt)
	dream := func(name, fact string) {
		t.Helper()
		writeFiles(t, dir, map[string]string{"transcripts/" + name: `{"role":"user","content":"` + fact + `"}` + "\n"})
		model.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []map[string]any{{"kind": "user", "slug": strings.ReplaceAll(strings.ToLower(name), ".jsonl", ""), "description": fact, "fact": fact}}})})
		model.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
		if rep, err := rt.Consolidator.Run(context.Background()); err != nil || len(rep.Pending) != 1 {
			t.Fatalf("run: %+v %v", rep, err)
		}
	}
	dream("speaks-italian.jsonl", "You speak Italian.")
	head := s.head()
	code, body := s.get("/status")
	if code != http.StatusOK {
		t.Fatalf("status: %d", code)
	}
	tip := strings.TrimSpace(s.git("rev-parse", "mindmount/dream/1"))
	mustContain(t, body, "Waiting for review", "mindmount/dream/1", "user_memory/speaks-italian.md", "You speak Italian.",
		`<input type="hidden" name="tip" value="`+tip+`">`)
	// The form approves the tip it showed: another is refused, nothing merged.
	if code, _ := s.post("/review/approve", url.Values{"n": {"1"}, "tip": {"0123456789abcdef"}, "next": {"/status"}}); code != http.StatusConflict {
		t.Fatalf("approve of another tip: %d", code)
	}
	if s.head() != head {
		t.Fatal("a refused approval merged")
	}
	code, body = s.post("/review/approve", url.Values{"n": {"1"}, "tip": {tip}, "next": {"/status"}})
	if code != http.StatusOK {
		t.Fatalf("approve: %d\n%s", code, body)
	}
	mustContain(t, body, "dream 1 merged")
	if got := strings.Fields(s.git("log", "-1", "--format=%P")); len(got) != 2 || got[0] != head {
		t.Fatalf("approve made no merge on %s: parents %v", head, got)
	}
	mustNotContain(t, body, "Waiting for review")

	dream("is-a-pilot.jsonl", "You are a pilot.")
	before := s.git("ls-tree", "-r", "HEAD", "user_memory")
	code, body = s.post("/review/reject", url.Values{"n": {"2"}, "reason": {"a joke"}, "next": {"/status"}})
	if code != http.StatusOK {
		t.Fatalf("reject: %d\n%s", code, body)
	}
	mustContain(t, body, "dream 2 rejected")
	if s.git("ls-tree", "-r", "HEAD", "user_memory") != before {
		t.Fatal("a rejection changed memories")
	}
	mustContain(t, s.git("log", "-1", "--format=%B"), "Mindmount-Reason: a joke")
	// A number that waits for nothing, and a request without the CSRF token.
	if code, _ := s.post("/review/approve", url.Values{"n": {"9"}, "tip": {tip}}); code != http.StatusNotFound {
		t.Fatalf("an unknown dream: %d", code)
	}
	if code, _ := s.post("/review/approve", url.Values{"n": {"2"}, "csrf": {"forged"}}); code != http.StatusForbidden {
		t.Fatalf("a forged CSRF token: %d", code)
	}
}

// TestRevertDreamMerge: a consolidation dreams on its own branch and
// merges into main with two parents; reverting that merge from the
// timeline undoes it against its first parent (git revert -m 1): the
// dream's memory goes, in one commit by ui on top of the merge, the
// cursor stays where the dream left it, and the next consolidation run
// reads no message again, so the memory stays undone.
func TestRevertDreamMerge(t *testing.T) {
	dir := newRepo(t)
	model := llmtest.New(t)
	rt := startRuntime(t, dir, host.RuntimeConfig{Consolidate: true, Idle: time.Hour, Every: 1 << 20, Provider: llm.NewOllama(model.OllamaURL(), "fake")})
	s := serveRepo(t, dir, rt)
	const rel = "user_memory/speaks-italian.md"
	merge := dreamItalian(t, rt, model)
	if s.head() != merge || len(strings.Fields(s.git("log", "-1", "--format=%P", merge))) != 2 {
		t.Fatalf("the dream was not merged with two parents at HEAD: %s", s.git("log", "-3", "--format=%H %P %s"))
	}
	if _, err := os.Stat(filepath.Join(dir, rel)); err != nil {
		t.Fatalf("the dream's memory is not on disk: %v", err)
	}
	cursor := s.git("show", merge+":"+consolidate.CursorFile)

	_, body := s.get("/log")
	mustContain(t, body, `name="commit" value="`+merge+`"`)
	s.revertOnTop(merge)
	if _, err := os.Stat(filepath.Join(dir, rel)); !os.IsNotExist(err) {
		t.Fatalf("the dream's memory is still there: %v", err)
	}
	if s.rt.Graph.Get(rel) != nil {
		t.Fatal("the graph still has the dream's memory")
	}
	if st := s.git("status", "--porcelain", "--", "user_memory", ".mindmount"); st != "" {
		t.Fatalf("work tree not clean after the revert:\n%s", st)
	}
	if c := s.git("show", "HEAD:"+consolidate.CursorFile); c != cursor {
		t.Fatalf("the revert moved the cursor:\n%s\nwas\n%s", c, cursor)
	}
	_, body = s.get("/")
	mustNotContain(t, body, ">"+rel+"<")

	// No message is read again: the memory stays undone.
	rep, err := rt.Consolidator.Run(context.Background())
	if err != nil || rep.Messages != 0 || rep.Added != 0 || len(rep.Merges) != 0 {
		t.Fatalf("the run after the revert: %+v %v", rep, err)
	}
	if _, err := os.Stat(filepath.Join(dir, rel)); !os.IsNotExist(err) {
		t.Fatalf("the next run brought the memory back: %v", err)
	}
}

// dreamItalian has the consolidator learn from a new transcript that the
// user speaks Italian (user_memory/speaks-italian.md), dreamt on its branch
// and merged into main (merge: auto); it returns the merge commit.
func dreamItalian(t *testing.T, rt *host.Runtime, model *llmtest.Server) string {
	t.Helper()
	writeFiles(t, rt.Dir, map[string]string{"transcripts/italian.jsonl": `{"role":"user","content":"I speak Italian."}` + "\n"})
	model.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []map[string]any{{"kind": "user", "slug": "speaks-italian", "description": "Speaks Italian", "fact": "You speak Italian."}}})})
	model.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})
	rep, err := rt.Consolidator.Run(context.Background())
	if err != nil || len(rep.Merges) != 1 || rep.Added != 1 {
		t.Fatalf("consolidation: %+v %v", rep, err)
	}
	return rep.Merges[0]
}

// revertOnTop reverts commit through the page and checks the answer and
// that the revert is one commit by ui on top of it.
func (s *site) revertOnTop(commit string) {
	s.t.Helper()
	code, body := s.post("/revert", url.Values{"commit": {commit}, "next": {"/log"}})
	if code != http.StatusOK {
		s.t.Fatalf("revert of %s: %d\n%s", commit[:8], code, body)
	}
	mustContain(s.t, body, "reverted "+commit[:8])
	if got := s.git("log", "-1", "--format=%an%n%P"); got != "ui\n"+commit {
		s.t.Fatalf("last commit author and parents %q, want ui's on %s", got, commit)
	}
}
