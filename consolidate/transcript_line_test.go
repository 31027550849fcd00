package consolidate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestEncodeLinesBytes pins the on-disk format of the one transcript line
// type: the bytes the HTTP chat and the harness hooks wrote before they
// shared it.
func TestEncodeLinesBytes(t *testing.T) {
	got := string(EncodeLines(
		Line{Role: RoleUser, Content: "hi\nthere", Time: "2026-12-02T10:00:00Z"},
		Line{Role: RoleAssistant, Content: "a \"quote\" <b>", Time: "2026-12-02T10:00:01Z", Cut: true},
		Line{Role: RoleUser, Content: "from a hook"},
	))
	want := `{"role":"user","content":"hi\nthere","time":"2026-12-02T10:00:00Z"}` + "\n" +
		`{"role":"assistant","content":"a \"quote\" \u003cb\u003e","time":"2026-12-02T10:00:01Z","cut":true}` + "\n" +
		`{"role":"user","content":"from a hook"}` + "\n"
	if got != want {
		t.Fatalf("EncodeLines:\n got %s\nwant %s", got, want)
	}
}

// TestAppendTranscriptInboxOnly: the writer appends in transcripts/ only,
// privately, and never through a symbolic link.
func TestAppendTranscriptInboxOnly(t *testing.T) {
	dir := t.TempDir()
	if err := AppendTranscript(dir, "user_memory/x.md", Line{Role: RoleUser, Content: "x"}); !errors.Is(err, ErrNotInbox) {
		t.Fatalf("outside the inbox: %v, want ErrNotInbox", err)
	}
	rel := "transcripts/http/a.jsonl"
	for i := 0; i < 2; i++ {
		if err := AppendTranscript(dir, rel, Line{Role: RoleUser, Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, rel))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("transcript mode: %v %v", fi, err)
	}
	if tr := ParseTranscript(rel, mustRead(t, filepath.Join(dir, rel))); len(tr.Messages) != 2 {
		t.Fatalf("appended: %+v", tr)
	}
	out := t.TempDir()
	if err := os.Symlink(out, filepath.Join(dir, "transcripts", "link")); err != nil {
		t.Fatal(err)
	}
	if err := AppendTranscript(dir, "transcripts/link/b.jsonl", Line{Role: RoleUser, Content: "x"}); err == nil {
		t.Fatal("appended through a symbolic link")
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Fatalf("a file appeared outside the repository: %v", ents)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzTranscriptLine: whatever a message holds, the writer makes one line
// of it, and the parser reads back its role and text.
func FuzzTranscriptLine(f *testing.F) {
	f.Add("hello", "2026-12-02T10:00:00Z", false, true)
	f.Add("line one\nline two\r\n\u2028", "", true, false)
	f.Add("{\"role\":\"system\"}\n{", "x", false, false)
	f.Fuzz(func(t *testing.T, content, when string, cut, user bool) {
		role := RoleAssistant
		if user {
			role = RoleUser
		}
		b := EncodeLines(Line{Role: role, Content: content, Time: when, Cut: cut})
		if bytes.Count(b, []byte("\n")) != 1 || !bytes.HasSuffix(b, []byte("\n")) {
			t.Fatalf("not one line: %q", b)
		}
		tr := ParseTranscript("transcripts/x.jsonl", b)
		if len(tr.Problems) != 0 || tr.Partial || len(tr.Messages) != 1 {
			t.Fatalf("parsed %q: %+v", b, tr)
		}
		m := tr.Messages[0]
		if m.Role != role || m.Line != 1 {
			t.Fatalf("message %+v, want role %s on line 1", m, role)
		}
		if utf8.ValidString(content) && m.Text != strings.TrimSpace(content) {
			t.Fatalf("text %q, want %q", m.Text, strings.TrimSpace(content))
		}
	})
}
