package httpapi

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/serve/host"
)

const canary = "CANARY-root-only-9c41"

// TestTranscriptWriterNeverFollowsALink is issue 22's second defect:
// `ln -s /anywhere MNT/alice/transcripts/http`, then one /v1/chat,
// appended the user's JSON to a root-only file and created files in
// another user's inbox. With a link at transcripts/, at transcripts/http,
// at the transcript itself, or into bob's repository, the chat is still
// answered, nothing outside alice's repository is created or appended to,
// and bob's inbox stays empty.
func TestTranscriptWriterNeverFollowsALink(t *testing.T) {
	bobInbox := func(e *env) string { return filepath.Join(host.UserDir(e.root, "bob"), "transcripts") }
	cases := map[string]func(e *env, secret string){
		"transcripts/http to a root-only folder": func(e *env, secret string) {
			os.MkdirAll(e.userPath("alice", "transcripts"), 0o755)
			if err := os.Symlink(secret, e.userPath("alice", "transcripts/http")); err != nil {
				t.Fatal(err)
			}
		},
		"transcripts to a root-only folder": func(e *env, secret string) {
			os.RemoveAll(e.userPath("alice", "transcripts"))
			if err := os.Symlink(secret, e.userPath("alice", "transcripts")); err != nil {
				t.Fatal(err)
			}
		},
		"transcripts/http into bob's inbox": func(e *env, secret string) {
			os.MkdirAll(bobInbox(e), 0o755)
			os.MkdirAll(e.userPath("alice", "transcripts"), 0o755)
			if err := os.Symlink(bobInbox(e), e.userPath("alice", "transcripts/http")); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, "ollama", nil)
			e.model.Handle(func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: "an answer"} })
			secret := filepath.Join(t.TempDir(), "root-only")
			os.MkdirAll(secret, 0o700)
			shadow := filepath.Join(secret, "shadow")
			os.WriteFile(shadow, []byte(canary+"\n"), 0o600)
			plant(e, secret)
			before, bobBefore := listTree(t, secret), listTree(t, bobInbox(e))
			code, body := e.status("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"hello there","sessionId":"s1"}`)
			if msg, _ := body["error"].(string); code != 409 || !strings.Contains(msg, "symbolic link") {
				t.Fatalf("chat through a planted link: %d %v; want 409 naming the link", code, body)
			}
			if len(e.model.Calls()) != 0 {
				t.Fatal("a chat that cannot be recorded reached the model")
			}
			if b, _ := os.ReadFile(shadow); string(b) != canary+"\n" {
				t.Fatalf("the root-only file was written: %q", b)
			}
			if after := listTree(t, secret); after != before {
				t.Fatalf("files were created outside alice's repository:\n%s", after)
			}
			if got := listTree(t, bobInbox(e)); got != bobBefore {
				t.Fatalf("bob's inbox got files:\n%s", got)
			}
		})
	}
}

// listTree names every file under dir, one per line.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return strings.Join(out, "\n")
}
