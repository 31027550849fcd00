package mount

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/mindmount/mindmount/memgraph"
)

// TestCursorRefusedAtTheMount: the consolidation cursor is consolidation's
// alone. Written, truncated, replaced by a rename, removed or created
// through the mount, it is refused with EPERM and neither the backing file
// nor HEAD changes: an agent that could move it past its transcripts would
// hide them from review.
func TestCursorRefusedAtTheMount(t *testing.T) {
	const cursor = `{"version":1,"transcripts":{"transcripts/s1.jsonl":{"messages":2,"hash":"abc"}}}` + "\n"
	tm := mountRepo(t, newRepo(t, map[string]string{memgraph.CursorFile: cursor}), Options{})
	p := tm.p(memgraph.CursorFile)
	if got, err := os.ReadFile(p); err != nil || string(got) != cursor {
		t.Fatalf("read the cursor through the mount: %q %v", got, err)
	}
	eperm := syscall.EPERM
	forged := []byte(`{"version":1,"transcripts":{"transcripts/s1.jsonl":{"messages":99999,"hash":"x"}}}` + "\n")
	wantErrno(t, "write", os.WriteFile(p, forged, 0o644), eperm)
	wantErrno(t, "open for writing", writeThrough(p, os.O_WRONLY), eperm)
	wantErrno(t, "truncate", os.Truncate(p, 0), eperm)
	wantErrno(t, "unlink", os.Remove(p), eperm)
	tm.write("forged.json", string(forged))
	wantErrno(t, "rename onto", os.Rename(tm.p("forged.json"), p), eperm)
	wantErrno(t, "rename away", os.Rename(p, tm.p("cursor-old.json")), eperm)
	if got, _ := os.ReadFile(tm.b(memgraph.CursorFile)); string(got) != cursor {
		t.Fatalf("the backing cursor changed: %q", got)
	}
	// Absent, it cannot be created either.
	tm2 := mountRepo(t, newRepo(t, nil), Options{})
	wantErrno(t, "create", os.WriteFile(tm2.p(memgraph.CursorFile), forged, 0o644), eperm)
	if _, err := os.Lstat(tm2.b(memgraph.CursorFile)); !os.IsNotExist(err) {
		t.Fatalf("a cursor created through the mount reached the backing tree: %v", err)
	}
	tm.settle()
	if got := tm.git("show", "HEAD:"+memgraph.CursorFile); strings.TrimSpace(got) != strings.TrimSpace(cursor) {
		t.Fatalf("the committed cursor changed: %q", got)
	}
	tm2.settle()
}
