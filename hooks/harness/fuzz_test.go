package harness

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mindmount/mindmount/consolidate"
)

func FuzzConvertLine(f *testing.F) {
	for _, p := range []string{"testdata/claude-code/transcript.jsonl", "testdata/codex/rollout.jsonl"} {
		b, _ := readTestdata(p)
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"role":"user","content":[{"type":"text","text":"x"},"y",{"text":"z"}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		m, ok := ConvertLine(line)
		if !ok {
			return
		}
		if m.Role != "user" && m.Role != "assistant" {
			t.Fatalf("role %q", m.Role)
		}
		if strings.TrimSpace(m.Content) == "" {
			t.Fatal("empty message kept")
		}
		// What we write must be one JSONL line that reads back the same.
		b := consolidate.EncodeLines(m)
		if bytes.Count(b, []byte("\n")) != 1 {
			t.Fatalf("encoded message spans lines: %q", b)
		}
		var back consolidate.Line
		if err := json.Unmarshal(b, &back); err != nil || (utf8.ValidString(m.Content) && back != m) {
			t.Fatalf("round trip: %+v -> %+v (%v)", m, back, err)
		}
	})
}

func FuzzParsePayload(f *testing.F) {
	b, _ := readTestdata("testdata/claude-code/stop.json")
	f.Add(b)
	f.Add([]byte(`{"session_id":"../../x","transcript_path":"/etc/passwd"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePayload(bytes.NewReader(data))
		if err != nil {
			return
		}
		rel := TranscriptRel(ClaudeCode, p.SessionID)
		if !strings.HasPrefix(rel, "transcripts/claude-code-") || strings.Count(rel, "/") != 1 || strings.Contains(rel, "..") {
			t.Fatalf("session %q gives unsafe path %q", p.SessionID, rel)
		}
	})
}

func FuzzParseObject(f *testing.F) {
	for _, p := range []string{"testdata/claude-code/settings.json", "testdata/gemini-cli/settings.json", "testdata/opencode/opencode.json"} {
		b, _ := readTestdata(p)
		f.Add(b)
	}
	f.Add([]byte(`{"a":[1,{"b":null}],"c":"<&>"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := parseObject(data)
		if err != nil {
			return
		}
		// What we write back means the same as what we read.
		out := o.marshal()
		var a, b any
		if json.Unmarshal(out, &b) != nil {
			t.Fatalf("wrote invalid JSON: %s", out)
		}
		if json.Unmarshal(data, &a) == nil && !jsonEqual(a, b) {
			t.Fatalf("changed meaning:\n%s\n->\n%s", data, out)
		}
		// Removing our entries from a file that has none changes nothing.
		if err := removeHooks(o); err == nil {
			removeMCP(o, "mcpServers")
		}
	})
}

func FuzzShellFields(f *testing.F) {
	f.Add("/usr/bin/mindmount")
	f.Add("/a b/it's")
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) {
			return
		}
		got := shellFields(shellQuote(s) + " hook")
		if len(got) != 2 || got[0] != s {
			t.Fatalf("%q -> %q -> %q", s, shellQuote(s), got)
		}
	})
}

func FuzzCutBlock(f *testing.F) {
	f.Add([]byte("# rules\n"), true)
	f.Add([]byte(""), false)
	f.Fuzz(func(t *testing.T, user []byte, trailingNL bool) {
		if bytes.Contains(user, []byte("mindmount:")) {
			return
		}
		if trailingNL && !bytes.HasSuffix(user, []byte("\n")) {
			user = append(user, '\n')
		}
		e := blockEdit("x", "", "body\n", false)
		in, err := e.change(user)
		if err != nil {
			t.Fatal(err)
		}
		out, err := blockEdit("x", "", "", true).change(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(user)) == 0 {
			if out != nil {
				t.Fatalf("a file we made alone was kept: %q", out)
			}
			return
		}
		// The one change allowed: a last line gets its missing newline.
		if !bytes.HasSuffix(user, []byte("\n")) {
			user = append(user, '\n')
		}
		if !bytes.Equal(out, user) {
			t.Fatalf("install+uninstall changed %q into %q", user, out)
		}
	})
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
