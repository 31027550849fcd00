package tracker

import (
	"sort"
	"strings"
	"sync"
)

// authorship is what a multi-user daemon's commits say beyond the writing
// program's identity: for which user they were written and, when the
// daemon could tell, from which sandbox (a bubblewrap process, a
// container's cgroup). Both go into git trailers, so that "git log" in a
// user's repository says which agent wrote:
//
//	Mindmount-User: alice
//	Mindmount-Sandbox: bwrap[4242]
//
// The zero value adds nothing: single-repository daemons are unchanged.
type authorship struct {
	mu        sync.Mutex
	user      string
	sandboxes map[string]bool // noted since the last commit
}

// NoteSandbox records that a writer in sandbox sb changed the repository;
// the next commit names it. A burst written from two sandboxes names both.
func (t *Tracker) NoteSandbox(sb string) {
	if sb == "" {
		return
	}
	t.who.mu.Lock()
	if t.who.sandboxes == nil {
		t.who.sandboxes = map[string]bool{}
	}
	if len(t.who.sandboxes) < 16 { // a commit names a few, not a fork bomb
		t.who.sandboxes[trailerValue(sb)] = true
	}
	t.who.mu.Unlock()
}

// withTrailers appends the authorship trailers to a commit message and
// returns the sandboxes it named, to be forgotten once the commit is made.
func (t *Tracker) withTrailers(msg string) (string, []string) {
	t.who.mu.Lock()
	defer t.who.mu.Unlock()
	if t.who.user == "" && len(t.who.sandboxes) == 0 {
		return msg, nil
	}
	sbs := make([]string, 0, len(t.who.sandboxes))
	for sb := range t.who.sandboxes {
		sbs = append(sbs, sb)
	}
	sort.Strings(sbs)
	return addTrailers(msg, t.who.user, sbs), sbs
}

// addTrailers is the one writer of the authorship trailers: msg, a blank
// line, "Mindmount-User: user" when user is set and one "Mindmount-Sandbox: sb"
// per sandbox (already trailer values). With neither, msg is returned as
// it is.
func addTrailers(msg, user string, sandboxes []string) string {
	if user == "" && len(sandboxes) == 0 {
		return msg
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(msg, "\n"))
	b.WriteString("\n\n")
	if user != "" {
		b.WriteString("Mindmount-User: " + trailerValue(user) + "\n")
	}
	for _, sb := range sandboxes {
		b.WriteString("Mindmount-Sandbox: " + sb + "\n")
	}
	return b.String()
}

// committedSandboxes forgets the sandboxes a commit named.
func (t *Tracker) committedSandboxes(sbs []string) {
	t.who.mu.Lock()
	for _, sb := range sbs {
		delete(t.who.sandboxes, sb)
	}
	t.who.mu.Unlock()
}

// trailerValue keeps a trailer on one line: control characters are
// written Go-quoted, and it is at most 200 bytes.
func trailerValue(s string) string {
	if len(s) > 200 {
		s = s[:200]
	}
	return quote(s)
}
