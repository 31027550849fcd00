package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mindmount/mindmount/consolidate"
)

const session = "3f2b8c1e-7a4d-4e5f-9b0a-1c2d3e4f5a6b"

// newMemory returns an empty memory folder and a harness transcript file.
func newMemory(t *testing.T) (mem, src string) {
	t.Helper()
	mem = filepath.Join(t.TempDir(), "memory")
	if err := os.MkdirAll(filepath.Join(mem, "transcripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	src = filepath.Join(t.TempDir(), session+".jsonl")
	return mem, src
}

func appendFile(t *testing.T, p string, data []byte) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func copyOnce(t *testing.T, mem, src string) int {
	t.Helper()
	n, err := Copy(CopyOptions{Memory: mem, Harness: ClaudeCode, SessionID: session, Source: src})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// destMessages reads the memory's transcript back as consolidation would.
func destMessages(t *testing.T, mem string) []consolidate.Line {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mem, filepath.FromSlash(TranscriptRel(ClaudeCode, session))))
	if err != nil {
		t.Fatal(err)
	}
	var out []consolidate.Line
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var m consolidate.Line
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("destination line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// TestCopyAppendsOnlyNewLines is a session's Stop hooks one after another:
// each copies what was added since the last, a repeat copies nothing, and
// a line the harness is still writing waits for the next call.
func TestCopyAppendsOnlyNewLines(t *testing.T) {
	mem, src := newMemory(t)
	appendFile(t, src, mustRead(t, "testdata/claude-code/transcript.jsonl"))
	if n := copyOnce(t, mem, src); n != 3 {
		t.Fatalf("first copy: %d messages, want 3", n)
	}
	if n := copyOnce(t, mem, src); n != 0 {
		t.Fatalf("repeated copy: %d messages, want 0", n)
	}
	more := mustRead(t, "testdata/claude-code/transcript-more.jsonl")
	cut := len(more) - 20 // the second line is still being written
	appendFile(t, src, more[:cut])
	if n := copyOnce(t, mem, src); n != 1 {
		t.Fatalf("copy with a partial last line: %d messages, want 1", n)
	}
	appendFile(t, src, more[cut:])
	if n := copyOnce(t, mem, src); n != 1 {
		t.Fatalf("copy after the line was finished: %d messages, want 1", n)
	}
	got := destMessages(t, mem)
	if len(got) != 5 || got[3].Content != "Perfect. Also remind me that I am allergic to penicillin when I plan trips." || got[4].Role != "assistant" {
		t.Fatalf("destination: %+v", got)
	}
	// Nothing of the copy state is in the inbox.
	entries, _ := os.ReadDir(filepath.Join(mem, "transcripts"))
	if len(entries) != 1 {
		t.Errorf("transcripts/ holds %d files, want 1", len(entries))
	}
}

// TestCopyConcurrentCallsDoNotDuplicate fires many hooks of one session at
// once (Stop and PreCompact together, twice over): every message lands
// exactly once.
func TestCopyConcurrentCallsDoNotDuplicate(t *testing.T) {
	mem, src := newMemory(t)
	appendFile(t, src, mustRead(t, "testdata/claude-code/transcript.jsonl"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := Copy(CopyOptions{Memory: mem, Harness: ClaudeCode, SessionID: session, Source: src})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}()
		if i == 3 {
			appendFile(t, src, mustRead(t, "testdata/claude-code/transcript-more.jsonl"))
		}
	}
	wg.Wait()
	got := destMessages(t, mem)
	if total != 5 || len(got) != 5 {
		t.Fatalf("copied %d, destination has %d messages, want 5: %+v", total, len(got), got)
	}
	seen := map[consolidate.Line]bool{}
	for _, m := range got {
		if seen[m] {
			t.Errorf("duplicated: %+v", m)
		}
		seen[m] = true
	}
}

// TestCopyRewrittenTranscript: a transcript replaced under the copied part
// (or a lost copy state) is read again without duplicating what the
// destination already has.
func TestCopyRewrittenTranscript(t *testing.T) {
	mem, src := newMemory(t)
	base := mustRead(t, "testdata/claude-code/transcript.jsonl")
	appendFile(t, src, base)
	copyOnce(t, mem, src)
	// Same length, different bytes under the offset: rewritten.
	rewritten := append(append([]byte(nil), base...), mustRead(t, "testdata/claude-code/transcript-more.jsonl")...)
	if err := os.WriteFile(src, rewritten[len(rewritten)-len(base):], 0o644); err != nil {
		t.Fatal(err)
	}
	copyOnce(t, mem, src)
	if err := os.RemoveAll(filepath.Join(mem, filepath.FromSlash(StateDir))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, rewritten, 0o644); err != nil {
		t.Fatal(err)
	}
	copyOnce(t, mem, src)
	got := destMessages(t, mem)
	seen := map[consolidate.Line]bool{}
	for _, m := range got {
		if seen[m] {
			t.Errorf("duplicated after a rewrite: %+v", m)
		}
		seen[m] = true
	}
	if len(seen) != 5 {
		t.Errorf("destination has %d distinct messages, want 5: %+v", len(seen), got)
	}
}

func TestCopyGeminiDocument(t *testing.T) {
	mem, _ := newMemory(t)
	src := filepath.Join(t.TempDir(), "session.json")
	doc := mustRead(t, "testdata/gemini-cli/session.json")
	if err := os.WriteFile(src, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	o := CopyOptions{Memory: mem, Harness: GeminiCLI, SessionID: "7c9e6679-7425-40de-944b-e07fc1f90ae7", Source: src}
	if n, err := Copy(o); err != nil || n != 3 {
		t.Fatalf("first copy: %d, %v", n, err)
	}
	// The harness rewrites the whole file with one more message.
	grown := strings.Replace(string(doc), `{"text": "Write the weekend menu."}]}`, `{"text": "Write the weekend menu."}]},
    {"id": "m5", "type": "gemini", "content": "Saturday: pastel de nata."}`, 1)
	if err := os.WriteFile(src, []byte(grown), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := Copy(o); err != nil || n != 1 {
		t.Fatalf("second copy: %d, %v", n, err)
	}
	if n, err := Copy(o); err != nil || n != 0 {
		t.Fatalf("repeat: %d, %v", n, err)
	}
}

// TestCopyStaysInsideTheMemory: a symlink planted as transcripts/ (or as
// the transcript file) must not redirect the append outside the memory.
func TestCopyStaysInsideTheMemory(t *testing.T) {
	mem, src := newMemory(t)
	appendFile(t, src, mustRead(t, "testdata/claude-code/transcript.jsonl"))
	outside := t.TempDir()
	if err := os.Remove(filepath.Join(mem, "transcripts")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(mem, "transcripts")); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(CopyOptions{Memory: mem, Harness: ClaudeCode, SessionID: session, Source: src}); err == nil {
		t.Error("copied through a symlinked transcripts/")
	}
	if err := os.Remove(filepath.Join(mem, "transcripts")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(mem, "transcripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(outside, "victim")
	if err := os.Symlink(victim, filepath.Join(mem, filepath.FromSlash(TranscriptRel(ClaudeCode, session)))); err != nil {
		t.Fatal(err)
	}
	if _, err := Copy(CopyOptions{Memory: mem, Harness: ClaudeCode, SessionID: session, Source: src}); err == nil {
		t.Error("copied through a symlinked transcript file")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("wrote outside the memory: %v", entries)
	}
}

func TestCopyBadInput(t *testing.T) {
	mem, src := newMemory(t)
	for _, o := range []CopyOptions{
		{Memory: mem, Harness: ClaudeCode, SessionID: session, Source: src}, // missing file
		{Memory: mem, Harness: ClaudeCode, SessionID: "", Source: src},
		{Memory: mem, Harness: ClaudeCode, SessionID: session, Source: ""},
		{Memory: mem, Harness: "nope", SessionID: session, Source: src},
		{Memory: mem, Harness: ClaudeCode, SessionID: session, Source: mem}, // a directory
	} {
		if n, err := Copy(o); err == nil || n != 0 {
			t.Errorf("Copy(%+v) = %d, %v; want an error", o, n, err)
		}
	}
}

// TestCopyDocumentOnOneLine: a whole-file JSON transcript written without
// indentation is still read as a document, and a JSONL transcript whose
// first line is long is still read as JSONL.
func TestCopyDocumentOnOneLine(t *testing.T) {
	mem, src := newMemory(t)
	doc := `{"messages":[{"type":"user","content":"I keep bees."},{"type":"gemini","content":"Lovely."}]}` + "\n"
	if err := os.WriteFile(src, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := copyOnce(t, mem, src); n != 2 {
		t.Errorf("one-line document: %d messages, want 2", n)
	}
	mem2, src2 := newMemory(t)
	long := `{"role":"user","content":"` + strings.Repeat("bees ", 400) + `"}` + "\n" + `{"role":"assistant","content":"ok"}` + "\n"
	if err := os.WriteFile(src2, []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	if n := copyOnce(t, mem2, src2); n != 2 {
		t.Errorf("JSONL with a long first line: %d messages, want 2", n)
	}
}
