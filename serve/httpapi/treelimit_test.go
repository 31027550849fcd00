package httpapi

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// TestTreeLimit507: with "tree_limit_mib: 1" in ROOT/config and alice's
// tree already past it, her chat and her posted transcript are refused
// with 507 and a message naming the limit and its key, before the model
// is asked and without a transcript written; bob, whose tree has room,
// chats as before.
func TestTreeLimit507(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "config"), []byte("tree_limit_mib: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, root, "ollama", 0, nil)
	if err := os.WriteFile(e.userPath("alice", "big.bin"), make([]byte, 1100<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	code, body := e.status("POST", "/v1/chat", adminKey, `{"userId":"alice","message":"Hi"}`)
	msg, _ := body["error"].(string)
	if code != http.StatusInsufficientStorage || !strings.Contains(msg, "1.0 MiB limit") || !strings.Contains(msg, "tree_limit_mib") {
		t.Fatalf("chat in a full tree: %d %v", code, body)
	}
	code, body = e.status("POST", "/v1/consolidate", adminKey, `{"userId":"alice","transcript":[{"role":"user","content":"I like tea"}]}`)
	if code != http.StatusInsufficientStorage {
		t.Fatalf("posted transcript in a full tree: %d %v", code, body)
	}
	if ts := e.transcripts("alice"); len(ts) != 0 {
		t.Fatalf("a refused request left transcripts: %v", ts)
	}
	e.model.Queue(llmtest.KindOther, llmtest.Reply{Content: "Hello bob"})
	resp := e.do("POST", "/v1/chat", adminKey, `{"userId":"bob","message":"Hi"}`)
	if out := readAll(resp); resp.StatusCode != http.StatusOK || !strings.Contains(out, "Hello bob") {
		t.Fatalf("bob's chat: %d %s", resp.StatusCode, out)
	}
}

// TestTreeLimitConsolidation507: a transcript that fits, whose memory
// would take alice's tree past its limit: the consolidation's merge is
// refused by the tracker (Apply) and the answer is 507 naming the key;
// the memory is neither written nor committed.
func TestTreeLimitConsolidation507(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "config"), []byte("tree_limit_mib: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, root, "ollama", 0, nil)
	used := treeSize(t, e.userPath("alice", ""))
	if err := os.WriteFile(e.userPath("alice", "big.bin"), make([]byte, 1<<20-used-2048), 0o644); err != nil {
		t.Fatal(err)
	}
	e.scriptFact("long-fact", "A long fact", "You "+strings.Repeat("like long facts. ", 400))
	code, body := e.status("POST", "/v1/consolidate?wait=1", adminKey, `{"userId":"alice","transcript":[{"role":"user","content":"I like long facts"}]}`)
	msg, _ := body["error"].(string)
	if code != http.StatusInsufficientStorage || !strings.Contains(msg, "tree_limit_mib") {
		t.Fatalf("a memory past the limit: %d %v", code, body)
	}
	if _, err := os.Stat(e.userPath("alice", "user_memory/long-fact.md")); err == nil {
		t.Fatal("the refused memory was written")
	}
}

// treeSize is what dir's files hold, .git and .mindmount left out (the
// tree limit's count).
func treeSize(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".mindmount") {
			return filepath.SkipDir
		}
		if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}
