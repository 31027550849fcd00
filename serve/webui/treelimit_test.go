package webui

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/serve/host"
)

// TestEditTreeFull507: with "tree_limit_mib: 1" and a tree already past
// it, an edit that makes a memory longer is refused with 507 and the
// limit's key, nothing written or committed; an edit that makes it
// shorter (cleaning up) is saved.
func TestEditTreeFull507(t *testing.T) {
	const rel = "user_memory/cats.md"
	dir := newRepo(t)
	writeFiles(t, dir, map[string]string{"big.bin": strings.Repeat("b", 1100<<10)})
	gitT(t, dir, "add", "-A")
	gitT(t, dir, "commit", "-q", "-m", "a full tree")
	op := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(op, []byte("tree_limit_mib: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := serveRepo(t, dir, startRuntime(t, dir, host.RuntimeConfig{Operator: &memgraph.OperatorSource{Path: op}}))
	head, before := s.head(), s.disk(rel)
	longer := memoryFile("Has a cat", "Has a cat named Miso", "You have a cat named Miso. "+strings.Repeat("She likes fish. ", 50))
	code, body := s.post("/edit", url.Values{"path": {rel}, "text": {longer}})
	if code != http.StatusInsufficientStorage || !strings.Contains(body, "tree_limit_mib") {
		t.Fatalf("a longer memory in a full tree: %d\n%s", code, body)
	}
	if s.head() != head || s.disk(rel) != before {
		t.Fatal("a refused edit was written or committed")
	}
	shorter := memoryFile("Has a cat", "Has a cat", "A cat.")
	if code, body := s.post("/edit", url.Values{"path": {rel}, "text": {shorter}}); code != http.StatusOK || s.head() == head {
		t.Fatalf("a shorter memory in a full tree: %d\n%s", code, body)
	}
}
