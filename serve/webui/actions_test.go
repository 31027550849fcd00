package webui

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/serve/host"
)

// consolidationSeed commits, as the consolidator would, a new memory, an
// update of porto and an advance of the cursor in one commit.
func consolidationSeed(t testing.TB) func(dir string) {
	return func(dir string) {
		writeFiles(t, dir, map[string]string{
			"user_memory/lisbon.md":     memoryFile("Lives in Lisbon", "Lives in Lisbon", "You live in Lisbon."),
			"user_memory/porto.md":      strings.Replace(memoryFile("Lives in Porto", "Lives in Porto", "You live in Porto.", "03.11.26", "04.11.26", "05.11.26"), "status: active", "status: contradicted\nsuperseded_by: user_memory/lisbon", 1),
			".mindmount/consolidate.md": "cursor: 4\n",
		})
		gitT(t, dir, "add", "-A")
		gitT(t, dir, "commit", "--author=consolidator <consolidator@mindmount.local>", "-qm",
			"consolidate transcripts/s1.jsonl: 1 added, 1 contradicted\n\nMindmount-Model: fake/m\nMindmount-Transcript: transcripts/s1.jsonl#1-4")
	}
}

// TestRevertConsolidation: reverting a consolidation is one new commit by
// "ui" through the tracker: the added memory goes, the contradicted one is
// active again, the cursor stays where it is (the run is not redone), and
// git log shows it on top of the reverted commit.
func TestRevertConsolidation(t *testing.T) {
	s := newSiteSeeded(t, consolidationSeed(t))
	target := s.head()
	s.revertOnTop(target)
	// The subject says what was reverted, as git revert's does.
	if got, want := s.git("log", "-1", "--format=%s"), `ui: revert `+target[:8]+` "consolidate transcripts/s1.jsonl: 1 added, 1 contradicted"`; got != want {
		t.Fatalf("revert subject %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "user_memory/lisbon.md")); !os.IsNotExist(err) {
		t.Fatalf("lisbon.md is still there: %v", err)
	}
	if st := s.git("status", "--porcelain"); st != "" {
		t.Fatalf("work tree not clean after the revert:\n%s", st)
	}
	mustNotContain(t, s.disk("user_memory/porto.md"), "contradicted")
	if c := s.git("show", "HEAD:.mindmount/consolidate.md"); c != "cursor: 4" {
		t.Fatalf("the cursor moved back: %q", c)
	}
	// The graph follows: porto is active and ranked again.
	if m := s.rt.Graph.Get("user_memory/porto.md"); m == nil || !m.Active() {
		t.Fatal("porto is not active in the graph after the revert")
	}
	// Reverting again changes nothing.
	before := s.head()
	_, body := s.post("/revert", url.Values{"commit": {target}})
	mustContain(t, body, "already undone")
	if s.head() != before {
		t.Fatal("a second revert made a commit")
	}
}

// TestRevertMergesLaterChanges: a commit is reverted on top of later
// changes to the same file (other lines) by a three-way merge; a change
// to the same lines is refused with 409 and nothing committed.
func TestRevertMergesLaterChanges(t *testing.T) {
	var first string
	s := newSiteSeeded(t, func(dir string) {
		p := filepath.Join(dir, "user_memory/likes-tea.md")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, []byte(strings.Replace(string(b), "Drinks green tea every morning", "Drinks green tea every evening", 1)), 0o644)
		gitT(t, dir, "commit", "-qam", "evening")
		first = gitT(t, dir, "rev-parse", "HEAD")
		b, _ = os.ReadFile(p)
		os.WriteFile(p, append(b, "used, 06.11.26\n"...), 0o644)
		gitT(t, dir, "commit", "-qam", "a use")
	})
	code, body := s.post("/revert", url.Values{"commit": {first}})
	if code != http.StatusOK {
		t.Fatalf("revert: %d\n%s", code, body)
	}
	got := s.disk("user_memory/likes-tea.md")
	mustContain(t, got, "description: Drinks green tea every morning", "used, 06.11.26")

	// Now the description line changed since: the old commit conflicts.
	s2 := newSiteSeeded(t, func(dir string) {
		p := filepath.Join(dir, "user_memory/likes-tea.md")
		b, _ := os.ReadFile(p)
		os.WriteFile(p, []byte(strings.Replace(string(b), "every morning", "every evening", 1)), 0o644)
		gitT(t, dir, "commit", "-qam", "evening")
		first = gitT(t, dir, "rev-parse", "HEAD")
		b, _ = os.ReadFile(p)
		os.WriteFile(p, []byte(strings.Replace(string(b), "every evening", "at noon", 1)), 0o644)
		gitT(t, dir, "commit", "-qam", "noon")
	})
	head := s2.head()
	code, body = s2.post("/revert", url.Values{"commit": {first}})
	if code != http.StatusConflict {
		t.Fatalf("conflicting revert: %d, want 409\n%s", code, body)
	}
	mustContain(t, body, "changed since", "Nothing was changed")
	if s2.head() != head {
		t.Fatal("a refused revert committed")
	}
	mustContain(t, s2.disk("user_memory/likes-tea.md"), "at noon")
}

// TestRevertRefusesBadInput: an abbreviated, unknown or non-hex commit is
// 404, the root commit 409.
func TestRevertRefusesBadInput(t *testing.T) {
	s := newSite(t)
	head := s.head()
	for _, c := range []string{"", head[:8], strings.Repeat("0", 40), "HEAD", "--all", head + "x"} {
		if code, _ := s.post("/revert", url.Values{"commit": {c}}); code != http.StatusNotFound {
			t.Errorf("revert %q: %d, want 404", c, code)
		}
	}
	if code, _ := s.post("/revert", url.Values{"commit": {head}}); code != http.StatusConflict {
		t.Errorf("revert of the root commit: %d, want 409", code)
	}
	if s.head() != head {
		t.Fatal("a refused revert committed")
	}
}

// TestRetireAndReactivate: each is one commit by ui setting the status;
// blocks and read_only files are refused.
func TestRetireAndReactivate(t *testing.T) {
	s := newSite(t)
	code, body := s.post("/retire", url.Values{"path": {"user_memory/cats.md"}, "next": {"/m/user_memory/cats.md"}})
	if code != http.StatusOK {
		t.Fatalf("retire: %d\n%s", code, body)
	}
	mustContain(t, body, "retired user_memory/cats.md", "status: retracted", "Reactivate")
	mustContain(t, s.git("show", "HEAD:user_memory/cats.md"), "status: retracted")
	// The message says what the person did and lists the file, as the
	// tracker's commits do.
	if m := s.git("log", "-1", "--format=%an%n%B"); m != "ui\nui: retire user_memory/cats.md\n\nM user_memory/cats.md" {
		t.Fatalf("author and message %q", m)
	}
	code, body = s.post("/reactivate", url.Values{"path": {"user_memory/cats.md"}})
	if code != http.StatusOK {
		t.Fatalf("reactivate: %d\n%s", code, body)
	}
	mustContain(t, s.git("show", "HEAD:user_memory/cats.md"), "status: active")
	head := s.head()
	for _, p := range []string{"character.md", "user.md", "../x.md", ".git/config"} {
		if code, _ := s.post("/retire", url.Values{"path": {p}}); code == http.StatusOK {
			t.Errorf("retire %s: %d", p, code)
		}
	}
	if s.head() != head {
		t.Fatal("a refused retire committed")
	}
}

// TestEditInvalidThenValid: an invalid edit is shown again with the
// validator's problem beside the text, and nothing is written or
// committed; the fixed text is one commit by ui.
func TestEditInvalidThenValid(t *testing.T) {
	s := newSite(t)
	head := s.head()
	before := s.disk("user_memory/cats.md")
	bad := "---\ndescription: Has a cat named Miso\ncolour: grey\n---\n# Has a cat\n"
	code, body := s.post("/edit", url.Values{"path": {"user_memory/cats.md"}, "text": {strings.ReplaceAll(bad, "\n", "\r\n")}})
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("invalid edit: %d\n%s", code, body)
	}
	mustContain(t, body, `id="problems"`, "colour", "user_memory/cats.md:3")
	if s.head() != head || s.disk("user_memory/cats.md") != before {
		t.Fatal("an invalid edit was written or committed")
	}
	good := strings.Replace(bad, "colour: grey\n", "", 1) + "\n## Fact\nYou have a grey cat named Miso.\n"
	code, body = s.post("/edit", url.Values{"path": {"user_memory/cats.md"}, "text": {strings.ReplaceAll(good, "\n", "\r\n")}, "next": {"/m/user_memory/cats.md"}})
	if code != http.StatusOK {
		t.Fatalf("valid edit: %d\n%s", code, body)
	}
	mustContain(t, body, "saved user_memory/cats.md")
	if got := s.git("show", "HEAD:user_memory/cats.md") + "\n"; got != good {
		t.Fatalf("committed %q, want %q (CRLF from the browser turned into LF)", got, good)
	}
	if a := s.git("log", "-1", "--format=%an"); a != "ui" {
		t.Fatalf("author %q", a)
	}
	// The form shows the file.
	_, body = s.get("/edit/user_memory/cats.md")
	mustContain(t, body, "You have a grey cat named Miso.")
}

// TestEditFixesHeldBack: a version held back as invalid is what a person
// comes to the edit page to fix; saving the committed text back makes no
// commit, puts that text on disk and the file is no longer reported.
func TestEditFixesHeldBack(t *testing.T) {
	s := newSite(t)
	const rel = "user_memory/cats.md"
	committed := s.disk(rel)
	writeFiles(t, s.dir, map[string]string{rel: "---\ndescription: Has a cat\ncolour: grey\n---\n# Has a cat\n"})
	reported := func() bool {
		for _, p := range s.rt.Tracker.Invalid() {
			if p.Path == rel {
				return true
			}
		}
		return false
	}
	waitFor(t, "the invalid version reported", reported)
	head := s.head()
	_, body := s.get("/edit/" + rel)
	mustContain(t, body, "colour: grey")
	code, body := s.post("/edit", url.Values{"path": {rel}, "text": {committed}})
	if code != http.StatusOK {
		t.Fatalf("saving the committed text: %d\n%s", code, body)
	}
	mustContain(t, body, "no change to "+rel)
	if s.head() != head || s.disk(rel) != committed {
		t.Fatalf("a commit was made, or the disk does not hold the committed text:\n%s", s.disk(rel))
	}
	waitFor(t, "the file no longer reported", func() bool { return !reported() })
}

// waitFor waits up to ten seconds for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestActionWaitsForGit: while a git command holds the repository (here a
// merge in progress), an action is refused with 503 and commits nothing.
func TestActionWaitsForGit(t *testing.T) {
	s := newSite(t)
	head := s.head()
	if err := os.WriteFile(filepath.Join(s.dir, ".git", "MERGE_HEAD"), []byte(head+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, body := s.post("/retire", url.Values{"path": {"user_memory/cats.md"}})
	if code != http.StatusServiceUnavailable {
		t.Fatalf("retire during a merge: %d, want 503\n%s", code, body)
	}
	mustContain(t, body, "git merge is in progress")
	if s.head() != head || strings.Contains(s.disk("user_memory/cats.md"), "retracted") {
		t.Fatal("an action committed or wrote during a git merge")
	}
}

// TestEditSecretRefused: an edit that adds a secret is refused like an
// invalid one, naming the rule and line, never the value; nothing is
// written.
func TestEditSecretRefused(t *testing.T) {
	s := newSite(t)
	head := s.head()
	const id, secret = "AKIAZ3MQR7WXPLKJH4TB", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"
	text := memoryFile("Has a cat", "Has a cat named Miso", "aws_access_key_id = "+id+"\naws_secret_access_key = "+secret)
	code, body := s.post("/edit", url.Values{"path": {"user_memory/cats.md"}, "text": {text}})
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("secret edit: %d", code)
	}
	mustContain(t, body, "secret found", "rule ")
	// The textarea gives the person's text back; the problem list never
	// holds the value.
	probs := body[strings.Index(body, `id="problems"`):strings.Index(body, "<textarea")]
	mustNotContain(t, probs, id, secret)
	if s.head() != head || strings.Contains(s.disk("user_memory/cats.md"), id) {
		t.Fatal("a secret was written or committed")
	}
}

// TestEditReadOnlyRefused: a read_only file is not edited.
func TestEditReadOnlyRefused(t *testing.T) {
	s := newSite(t)
	head := s.head()
	code, body := s.post("/edit", url.Values{"path": {"character.md"}, "text": {"---\ndescription: x\nread_only: true\n---\n# Evil\n"}})
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("read_only edit: %d\n%s", code, body)
	}
	// The write policy refuses it (tracker.ErrReadOnly), before validation.
	mustContain(t, body, "read_only", tracker.ErrReadOnly.Error())
	if s.head() != head {
		t.Fatal("a read_only file was committed")
	}
}

// TestConsolidateNow: the button asks the consolidator for a run; without
// consolidation it is refused.
func TestConsolidateNow(t *testing.T) {
	s := newSite(t)
	if code, body := s.post("/consolidate", url.Values{}); code != http.StatusConflict {
		t.Fatalf("consolidate without a consolidator: %d\n%s", code, body)
	}
	dir := newRepo(t)
	rt := startRuntime(t, dir, host.RuntimeConfig{Consolidate: true})
	s2 := serveRepo(t, dir, rt)
	code, body := s2.post("/consolidate", url.Values{"next": {"/status"}})
	if code != http.StatusOK {
		t.Fatalf("consolidate: %d\n%s", code, body)
	}
	mustContain(t, body, "consolidation requested", "Consolidate now")
}

// TestRevertRefusesPending: a revert never overwrites a change that waits
// for its commit (here a long debounce). A valid one is committed first,
// as its writer's commit (tracker.Apply flushes), and the revert is
// prepared again on top of it: here it then conflicts (409), nothing lost.
// An invalid one, held back, is refused (409) and kept on disk.
func TestRevertRefusesPending(t *testing.T) {
	var first, second string
	dir := newRepo(t)
	p := filepath.Join(dir, "user_memory/likes-tea.md")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), "every morning", "every evening", 1)), 0o644)
	gitT(t, dir, "commit", "-qam", "evening")
	first = gitT(t, dir, "rev-parse", "HEAD")
	writeFiles(t, dir, map[string]string{"user_memory/porto.md": memoryFile("Lives in Porto", "Lives in Porto, Portugal", "You live in Porto.")})
	gitT(t, dir, "commit", "-qam", "porto")
	second = gitT(t, dir, "rev-parse", "HEAD")
	rt := startRuntime(t, dir, host.RuntimeConfig{Debounce: time.Hour, MaxWait: time.Hour})
	s := serveRepo(t, dir, rt)
	waitPending := func(rel string) {
		t.Helper()
		waitFor(t, "the tracker to see "+rel+" change", func() bool { return slices.Contains(rt.Tracker.Pending(), rel) })
	}

	edited := strings.Replace(string(b), "every morning", "at noon", 1)
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	waitPending("user_memory/likes-tea.md")
	code, body := s.post("/revert", url.Values{"commit": {first}})
	if code != http.StatusConflict {
		t.Fatalf("revert over a pending change: %d, want 409\n%s", code, body)
	}
	mustContain(t, body, "changed since")
	if got := s.disk("user_memory/likes-tea.md"); got != edited {
		t.Fatalf("the pending change was overwritten:\n%s", got)
	}
	if got := s.git("show", "HEAD:user_memory/likes-tea.md") + "\n"; got != edited {
		t.Fatalf("the pending change is not what HEAD holds:\n%s", got)
	}
	if a := s.git("log", "-1", "--format=%an%n%P"); a != "editor\n"+second {
		t.Fatalf("the pending change was not committed as its own commit on %s: %q", second[:8], a)
	}

	head := s.head()
	bad := "---\ndescription: Lives in Porto\ncolour: red\n---\n# Lives in Porto\n"
	writeFiles(t, dir, map[string]string{"user_memory/porto.md": bad})
	waitPending("user_memory/porto.md")
	code, body = s.post("/revert", url.Values{"commit": {second}})
	if code != http.StatusConflict {
		t.Fatalf("revert over a held-back change: %d, want 409\n%s", code, body)
	}
	mustContain(t, body, "not committed yet")
	if got := s.disk("user_memory/porto.md"); got != bad {
		t.Fatalf("the held-back change was overwritten:\n%s", got)
	}
	if s.head() != head {
		t.Fatal("a refused revert committed")
	}
}
