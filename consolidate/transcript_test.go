package consolidate

import (
	"strings"
	"testing"
)

func TestParseJSONL(t *testing.T) {
	data := `{"role":"system","content":"You are helpful."}
{"role":"user","content":"I have a dog called Pixel.","ts":123}

{"role":"assistant","content":[{"type":"text","text":"Nice!"},{"type":"image","url":"x"},{"type":"text","text":"What breed?"}]}
not json at all
{"content":"no role"}
{"role":"wizard","content":"hm"}
{"role":"user","content":42}
{"type":"user","message":{"role":"user","content":"A beagle."}}
{"role":"tool","content":"ls output"}
{"role":"user","content":"and a cat`
	tr := ParseTranscript("transcripts/s1.jsonl", []byte(data))
	if tr.Format != "jsonl" {
		t.Fatalf("format %s", tr.Format)
	}
	var got []string
	for _, m := range tr.Messages {
		got = append(got, string(m.Role)+":"+m.Text)
	}
	want := []string{"system:You are helpful.", "user:I have a dog called Pixel.", "assistant:Nice!\nWhat breed?", "user:A beagle.", "tool:ls output"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("messages\n got %q\nwant %q", got, want)
	}
	var probs []string
	for _, p := range tr.Problems {
		probs = append(probs, p.String())
	}
	wantP := []string{
		"transcripts/s1.jsonl:5: not a JSON object",
		`transcripts/s1.jsonl:6: missing "role"`,
		`transcripts/s1.jsonl:7: unknown role "wizard"`,
		`transcripts/s1.jsonl:8: "content" must be a string`,
	}
	if len(probs) != len(wantP) {
		t.Fatalf("problems %q", probs)
	}
	for i := range wantP {
		if !strings.HasPrefix(probs[i], wantP[i]) {
			t.Errorf("problem %d = %q, want prefix %q", i, probs[i], wantP[i])
		}
	}
	if !tr.Partial {
		t.Error("unterminated last line should mark the transcript partial")
	}
	if tr.Messages[1].Line != 2 || tr.Messages[3].Line != 9 {
		t.Errorf("lines %d %d", tr.Messages[1].Line, tr.Messages[3].Line)
	}
}

func TestParseTurns(t *testing.T) {
	cases := []struct {
		name, data string
		want       []string
	}{
		{"plain", "User: I live in Lyon.\nAssistant: Noted.\nUser: I moved\nlast year.\n", []string{"user:I live in Lyon.", "assistant:Noted.", "user:I moved\nlast year."}},
		{"bold", "**User:** hi there\n**Assistant**: hello\n", []string{"user:hi there", "assistant:hello"}},
		{"headings", "# Chat 12\n\n## User\nI am vegan.\n\n## Assistant\nOk.\n", []string{"document:# Chat 12", "user:I am vegan.", "assistant:Ok."}},
		{"crlf", "Human: yo\r\nAI: hey\r\n", []string{"user:yo", "assistant:hey"}},
		{"user said is prose", "User said nothing.\nThe end.", []string{"document:User said nothing.\nThe end."}},
		{"document", "# PR 12\n\nFixes the parser.", []string{"document:# PR 12\n\nFixes the parser."}},
		{"empty", "  \n", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := ParseTranscript("transcripts/x.md", []byte(tc.data))
			var got []string
			for _, m := range tr.Messages {
				got = append(got, string(m.Role)+":"+m.Text)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %q want %q", got, tc.want)
			}
		})
	}
}

func TestParseTranscriptDetection(t *testing.T) {
	if f := ParseTranscript("transcripts/chat.log", []byte(`{"role":"user","content":"x"}`+"\n")).Format; f != "jsonl" {
		t.Errorf("jsonl without extension: %s", f)
	}
	if f := ParseTranscript("transcripts/notes.txt", []byte("{not chat}\n")).Format; f != "document" {
		t.Errorf("txt: %s", f)
	}
	tr := ParseTranscript("transcripts/bin", []byte{0xff, 0, 1})
	if len(tr.Messages) != 0 || len(tr.Problems) != 1 {
		t.Errorf("binary: %+v", tr)
	}
}

func TestCursorStartAdvance(t *testing.T) {
	tr := ParseTranscript("transcripts/a.jsonl", []byte(`{"role":"user","content":"one"}
{"role":"user","content":"two"}
`))
	c, err := ParseCursor(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s, rw := c.Start(tr); s != 0 || rw {
		t.Fatal(s, rw)
	}
	c.Advance(tr, 1)
	c2, err := ParseCursor(c.Render())
	if err != nil {
		t.Fatal(err)
	}
	if s, rw := c2.Start(tr); s != 1 || rw {
		t.Fatal(s, rw)
	}
	// Rewritten prefix: start over.
	tr2 := ParseTranscript("transcripts/a.jsonl", []byte(`{"role":"user","content":"uno"}
{"role":"user","content":"two"}
`))
	if s, rw := c2.Start(tr2); s != 0 || !rw {
		t.Fatal(s, rw)
	}
	if _, err := ParseCursor([]byte("{")); err == nil {
		t.Fatal("broken cursor accepted")
	}
}

func FuzzParseJSONL(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"hi"}` + "\n" + `{"role":"assistant","content":[{"type":"text","text":"yo"}]}`))
	f.Add([]byte("{\n}\n[]\nnull\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := ParseTranscript("transcripts/f.jsonl", data)
		for _, p := range tr.Problems {
			if p.Line < 0 {
				t.Fatal("negative line")
			}
		}
		_ = PrefixHash(tr.Messages, len(tr.Messages))
	})
}

func FuzzParseTurns(f *testing.F) {
	f.Add([]byte("User: hi\nAssistant: hello\n## User\nyo"))
	f.Add([]byte("**User:** x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := ParseTranscript("transcripts/f.md", data)
		for _, m := range tr.Messages {
			if m.Line < 1 {
				t.Fatal("line < 1")
			}
		}
	})
}

func FuzzParseDocument(f *testing.F) {
	f.Add([]byte("Some notes about the user."))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr := ParseTranscript("transcripts/f", data)
		if len(tr.Messages) > 1 && tr.Format == "document" {
			t.Fatal("a document is one message")
		}
	})
}
