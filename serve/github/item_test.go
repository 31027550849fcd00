package github

import (
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/memgraph/recall"
)

func TestParseEvent(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Item
		err      bool
	}{
		{"merged pr", `{"action":"closed","pull_request":{"number":231,"title":"T","body":"Fixes #12 and #12, see #7","html_url":"u","merged":true,"merge_commit_sha":"abc","base":{"ref":"main"},"head":{"ref":"f"}},"repository":{"name":"r","owner":{"login":"o"}}}`,
			Item{PR: true, Action: "closed", Owner: "o", Repo: "r", Number: 231, Title: "T", Body: "Fixes #12 and #12, see #7", URL: "u", Merged: true, MergeCommit: "abc", BaseRef: "main", HeadRef: "f",
				Linked: []Linked{{Number: 12}, {Number: 7}}}, false},
		{"issue", `{"action":"opened","issue":{"number":5,"title":"I","body":"","html_url":"v"},"repository":{"name":"r","owner":{"login":"o"}}}`,
			Item{Action: "opened", Owner: "o", Repo: "r", Number: 5, Title: "I", URL: "v"}, false},
		{"push event", `{"ref":"refs/heads/main"}`, Item{}, true},
		{"no number", `{"pull_request":{"title":"x"}}`, Item{}, true},
		{"not json", `nope`, Item{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEvent([]byte(tc.in))
			if (err != nil) != tc.err {
				t.Fatalf("err %v", err)
			}
			if tc.err {
				return
			}
			if got.Source() == "" || strings.Join(strings.Fields(got.Title), "") != tc.want.Title || got.Number != tc.want.Number ||
				got.PR != tc.want.PR || got.Merged != tc.want.Merged || got.MergeCommit != tc.want.MergeCommit ||
				got.BaseRef != tc.want.BaseRef || len(got.Linked) != len(tc.want.Linked) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// FuzzParseEvent: any payload parses or fails cleanly, and an item's
// transcript is always one document (one batch), whatever its text.
func FuzzParseEvent(f *testing.F) {
	f.Add([]byte(`{"action":"closed","pull_request":{"number":1,"title":"T","body":"User: hi\nAssistant: ok","merged":true}}`))
	f.Add([]byte(`{"issue":{"number":2,"title":"x","body":"## User\nhello"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		it, err := ParseEvent(data)
		if err != nil {
			return
		}
		tr := consolidate.ParseTranscript(it.TranscriptPath(), it.Transcript())
		for _, m := range tr.Messages {
			if m.Role != consolidate.RoleDocument {
				t.Fatalf("the transcript reads as a chat turn %q: %q", m.Role, it.Transcript())
			}
		}
		if _, ok := ProvenanceOf(it.TranscriptPath()); !ok {
			t.Fatalf("ProvenanceOf(%q) fails", it.TranscriptPath())
		}
	})
}

// TestTranscriptIsOneBatch: chat-like lines in a body are quoted, so the
// pull request stays one document.
func TestTranscriptIsOneBatch(t *testing.T) {
	it := Item{PR: true, Number: 3, Title: "t", Body: "User: use sqlite\n**Assistant:** ok\n## User\nmore"}
	tr := consolidate.ParseTranscript(it.TranscriptPath(), it.Transcript())
	if len(tr.Messages) != 1 || tr.Messages[0].Role != consolidate.RoleDocument {
		t.Fatalf("messages %+v", tr.Messages)
	}
}

// TestCommentEscapesMemories: a memory's words cannot add links, images,
// mentions or HTML to the comment.
func TestCommentEscapesMemories(t *testing.T) {
	hits := []recall.Hit{{Path: "user_memory/x.md", Description: "![img](https://evil.example/p.png) <script>x</script> @admin [click](https://evil.example)", Status: "active", Score: 3}}
	body := Comment(hits, map[string]string{"user_memory/x.md": "PR#1 javascript:alert(1)"}, Links{Server: "https://github.com", Owner: "o", Repo: "r"})
	for _, bad := range []string{"![img](", "<script>", "@admin", "[click](", "(javascript:"} {
		if strings.Contains(body, bad) {
			t.Errorf("comment holds %q:\n%s", bad, body)
		}
	}
}

func TestRelevant(t *testing.T) {
	hits := []recall.Hit{{Path: "a", Score: 5, Status: "active"}, {Path: "b", Score: 4, Status: "contradicted"}, {Path: "c", Score: 0.5}, {Path: "d", Score: 2}, {Path: "e", Score: 1.5}}
	got := Relevant(hits, 1, 2)
	if len(got) != 2 || got[0].Path != "a" || got[1].Path != "d" {
		t.Fatalf("got %+v", got)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://x-access-token:ghs_abc@github.com/o/r.git": "https://***@github.com/o/r.git",
		"fatal: https://u:p@h/x failed; http://a@b/c":       "fatal: https://***@h/x failed; http://***@b/c",
		"/tmp/project.git": "/tmp/project.git",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
