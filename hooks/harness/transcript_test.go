package harness

import (
	"bufio"
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/mindmount/mindmount/consolidate"
)

func convertFile(t *testing.T, path string) []consolidate.Line {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []consolidate.Line
	if recs, ok := ParseDocument(data); ok {
		for _, r := range recs {
			if m, ok := ConvertLine(r); ok {
				out = append(out, m)
			}
		}
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if m, ok := ConvertLine(sc.Bytes()); ok {
			out = append(out, m)
		}
	}
	return out
}

// TestConvertTranscripts reads each harness's recorded transcript and
// keeps only what the user and the assistant said: no tool calls or
// results, thinking, summaries, meta lines, slash-command echoes,
// sub-agent turns, environment preambles or developer prompts.
func TestConvertTranscripts(t *testing.T) {
	tests := []struct {
		file string
		want []consolidate.Line
	}{
		{"testdata/claude-code/transcript.jsonl", []consolidate.Line{
			{Role: "user", Content: "My grey cat Miso needs a sitter while I am in Lisbon next week. Can you draft a message to my neighbour?"},
			{Role: "assistant", Content: "Let me check your notes folder for the neighbour's name first."},
			{Role: "assistant", Content: "Here is a draft for Mrs. Duarte: could you feed Miso twice a day from the 8th to the 14th?"},
		}},
		{"testdata/gemini-cli/session.json", []consolidate.Line{
			{Role: "user", Content: "I run a small bakery in Porto and I open at 6am."},
			{Role: "assistant", Content: "Early mornings! How can I help with the bakery?"},
			{Role: "user", Content: "Write the weekend menu."},
		}},
		{"testdata/codex/rollout.jsonl", []consolidate.Line{
			{Role: "user", Content: "I prefer tabs over spaces in every Go file."},
			{Role: "assistant", Content: "gofmt uses tabs already, so you are set."},
		}},
	}
	for _, tt := range tests {
		if got := convertFile(t, tt.file); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.file, got, tt.want)
		}
	}
}

func TestConvertLineShapes(t *testing.T) {
	tests := []struct {
		line string
		ok   bool
		want consolidate.Line
	}{
		{`{"role":"user","content":"hi there"}`, true, consolidate.Line{Role: "user", Content: "hi there"}},
		{`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_use","name":"x"},{"type":"text","text":"b"}]}`, true, consolidate.Line{Role: "assistant", Content: "a\nb"}},
		{`{"role":"tool","content":"ls output"}`, false, consolidate.Line{}},
		{`{"role":"system","content":"be nice"}`, false, consolidate.Line{}},
		{`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"x"}]}}`, false, consolidate.Line{}},
		{`{"type":"user","message":{"role":"user","content":"<system-reminder>x</system-reminder>"}}`, false, consolidate.Line{}},
		{`{"type":"user","message":{"role":"user","content":"[Request interrupted by user]"}}`, false, consolidate.Line{}},
		{`{"type":"user","content":"plain"}`, true, consolidate.Line{Role: "user", Content: "plain"}},
		{`not json`, false, consolidate.Line{}},
		{`{"role":"user","content":42}`, false, consolidate.Line{}},
		{`{"role":"user","content":"   "}`, false, consolidate.Line{}},
		{`[1,2]`, false, consolidate.Line{}},
	}
	for _, tt := range tests {
		got, ok := ConvertLine([]byte(tt.line))
		if ok != tt.ok || got != tt.want {
			t.Errorf("ConvertLine(%s) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSessionNameConfinesHostileIDs(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{
		"3f2b8c1e-7a4d-4e5f-9b0a-1c2d3e4f5a6b", "../../etc/passwd", "..", ".", "/", "a/b", "a\\b", "A/B", "a-b",
		"", "x\x00y", "\n", string(bytes.Repeat([]byte("z"), 500)), "é", "e",
	} {
		n := SessionName(id)
		if n == "" || len(n) > 80 || bytes.ContainsAny([]byte(n), "/\\.\x00\n") || n[0] == '-' {
			t.Errorf("SessionName(%q) = %q: not a safe file-name part", id, n)
		}
		if other, dup := seen[n]; dup {
			t.Errorf("SessionName(%q) = SessionName(%q) = %q", id, other, n)
		}
		seen[n] = id
	}
	if n := SessionName("3f2b8c1e-7a4d-4e5f-9b0a-1c2d3e4f5a6b"); n != "3f2b8c1e-7a4d-4e5f-9b0a-1c2d3e4f5a6b" {
		t.Errorf("a UUID changed: %q", n)
	}
	if rel := TranscriptRel(ClaudeCode, "../../x"); !bytes.HasPrefix([]byte(rel), []byte("transcripts/claude-code-")) || bytes.Count([]byte(rel), []byte("/")) != 1 {
		t.Errorf("TranscriptRel escaped: %q", rel)
	}
}

func TestParsePayload(t *testing.T) {
	p, err := ParsePayload(bytes.NewReader(mustRead(t, "testdata/claude-code/session-start.json")))
	if err != nil {
		t.Fatal(err)
	}
	if p.SessionID != "3f2b8c1e-7a4d-4e5f-9b0a-1c2d3e4f5a6b" || p.HookEventName != "SessionStart" || p.Source != "startup" || p.CWD == "" {
		t.Errorf("payload %+v", p)
	}
	if _, err := ParsePayload(bytes.NewReader([]byte("[]"))); err == nil {
		t.Error("a JSON list was taken as a payload")
	}
	if p, err := ParsePayload(bytes.NewReader(nil)); err != nil || p != (Payload{}) {
		t.Errorf("empty stdin: %+v, %v", p, err)
	}
	if _, err := ParsePayload(bytes.NewReader(bytes.Repeat([]byte(" "), MaxPayload+10))); err == nil {
		t.Error("an oversized payload was read")
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

func readTestdata(p string) ([]byte, error) { return os.ReadFile(p) }
