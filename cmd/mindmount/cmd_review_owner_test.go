package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mindmount/mindmount/serve/host"
)

// TestConsolidateAndReviewAsRootRunAsOwner: root consolidating or
// reviewing another user's repository runs as that user, so no program of
// the repository's git config runs as root and no file of root's is left
// in the user's tree (a root-owned lock, index or ref would stop the
// user's own worker from committing).
func TestConsolidateAndReviewAsRootRunAsOwner(t *testing.T) {
	root := serveRoot(t)
	p := plantGitPrograms(t, host.UserDir(root, "alice"), aliceUID)
	// A transcript gives consolidation something to do: it opens the
	// repository for writing and takes its dream lock.
	inbox := filepath.Join(p.dir, "transcripts")
	if out, err := as(aliceUID, "sh", "-c", `mkdir -p "$1" && printf 'user: I drink tea\n' > "$1/t.md"`, "sh", inbox); err != nil {
		t.Fatalf("transcript: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"review", p.dir},
		{"review", "show", "1", p.dir},
		{"review", "reject", "1", p.dir},
		{"consolidate", "--timeout", "2s", p.dir},
	} {
		out, _ := runBinary(t, []string{"HOME=/nonexistent", "MINDMOUNT_LLM=ollama", "OLLAMA_HOST=http://127.0.0.1:1", "MINDMOUNT_MODEL=none"}, args...)
		p.ranAs(t, "mindmount "+args[0])
		if left := rootOwned(t, p.dir); len(left) > 0 {
			t.Errorf("mindmount %v left files of root's in alice's repository: %v\n%s", args, left, out)
		}
	}
	if _, err := os.Stat(p.dir); err != nil {
		t.Fatal(err)
	}
}
