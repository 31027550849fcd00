package mount

import (
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestInboxKeepsItsName: the transcripts/ inbox is never committed, so it
// cannot be renamed through the mount (EPERM) — away, its transcripts
// would become ordinary files and be committed; in its place, another
// folder's committed files would leave the rule's reach. Files still move
// in and out one by one, and nothing of the inbox reaches git.
func TestInboxKeepsItsName(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	eperm := syscall.EPERM
	tm.write("notes/a.md", "a committed note\n")
	tm.settle()
	wantErrno(t, "rename a folder to the inbox's name", os.Rename(tm.p("notes"), tm.p("transcripts")), eperm)
	tm.write("transcripts/s1.jsonl", `{"role":"user","content":"my private talk"}`+"\n")
	wantErrno(t, "rename the inbox away", os.Rename(tm.p("transcripts"), tm.p("transcripts.real")), eperm)
	if err := os.Mkdir(tm.p("notes/sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantErrno(t, "move the inbox into a folder", os.Rename(tm.p("transcripts"), tm.p("notes/sub/transcripts")), eperm)
	// A file moves out, as any file does (and is then an ordinary file).
	tm.write("transcripts/s2.jsonl", `{"role":"user","content":"fine to keep"}`+"\n")
	if err := os.Rename(tm.p("transcripts/s2.jsonl"), tm.p("notes/s2.jsonl")); err != nil {
		t.Fatalf("move a file out of the inbox: %v", err)
	}
	tm.settle()
	if out := tm.git("log", "--all", "--name-only", "--format="); containsLine(out, "transcripts/s1.jsonl") || containsLine(out, "transcripts.real/s1.jsonl") {
		t.Fatalf("the inbox reached git:\n%s", out)
	}
	if _, err := os.Stat(tm.b("transcripts/s1.jsonl")); err != nil {
		t.Fatalf("the transcript left the inbox: %v", err)
	}
}

func containsLine(s, line string) bool {
	for _, l := range strings.Split(s, "\n") {
		if l == line {
			return true
		}
	}
	return false
}
