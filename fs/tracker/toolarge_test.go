package tracker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
	"github.com/mindmount/mindmount/memgraph"
)

// hugeSize is a memory file far over the size rule (the soak wrote 62 MB).
const hugeSize = 62 << 20

// allocated runs f and returns the bytes the process allocated meanwhile.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestTooLargeMemoryNeverRead: a memory file far over the size rule (a
// sparse 62 MB file) is judged by its size alone. The mount's Refresh, the
// commit and a start-up scan each allocate a small fraction of its size;
// the size rule's problem is reported in .mindmount/status; the committed
// version keeps serving; the file stays on disk as it is.
func TestTooLargeMemoryNeverRead(t *testing.T) {
	dir := conformance.NewRepo(t)
	rel := "user_memory/huge.md"
	good := conformance.Memory("a note", "Note", "the small version")
	conformance.WriteFile(t, dir, rel, good)
	conformance.Git(t, dir, "add", rel)
	conformance.Git(t, dir, "commit", "-q", "-m", "small version")
	tr, g, _ := open(t, dir, tracker.Config{})
	abs := filepath.Join(dir, rel)
	if err := os.Truncate(abs, hugeSize); err != nil {
		t.Fatal(err)
	}
	bound := uint64(hugeSize / 16)

	if n := allocated(func() { tr.Refresh(rel) }); n > bound {
		t.Errorf("Refresh allocated %d bytes for a %d-byte file (bound %d)", n, hugeSize, bound)
	} else {
		t.Logf("Refresh of a %d-byte memory allocated %d bytes", hugeSize, n)
	}
	wantMsg := "memory files may be at most"
	if !hasProblem(g.Problems(), rel, wantMsg) {
		t.Errorf("the graph does not report %s as too large: %v", rel, g.Problems())
	}
	if !strings.Contains(string(g.Index(memgraph.KindUser)), "a note") {
		t.Errorf("the last valid version stopped serving:\n%s", g.Index(memgraph.KindUser))
	}

	tr.Touch(rel, "agent")
	var ferr error
	if n := allocated(func() { ferr = tr.Flush(context.Background()) }); n > bound {
		t.Errorf("the commit allocated %d bytes for a %d-byte file (bound %d)", n, hugeSize, bound)
	} else {
		t.Logf("commit of a %d-byte memory allocated %d bytes", hugeSize, n)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
	if head, _ := conformance.HeadFile(t, dir, rel); strings.TrimSpace(head) != strings.TrimSpace(good) {
		t.Errorf("HEAD holds %d bytes of %s, want the small version", len(head), rel)
	}
	inv := tr.Invalid()
	if !hasProblem(inv, rel, wantMsg) || !errors.Is(inv[0].Err, tracker.ErrInvalid) {
		t.Errorf("Invalid() = %v", inv)
	}
	if st := string(tr.Status()); !strings.Contains(st, rel+": file is 65011712 bytes; memory files may be at most 65536 bytes") {
		t.Errorf("status does not report the file:\n%s", st)
	}
	if fi, err := os.Stat(abs); err != nil || fi.Size() != hugeSize {
		t.Errorf("the file on disk changed: %v %v", fi, err)
	}

	var g2 *memgraph.Graph
	if n := allocated(func() { g2, _ = memgraph.Scan(dir) }); n > bound {
		t.Errorf("a scan allocated %d bytes with a %d-byte memory (bound %d)", n, hugeSize, bound)
	}
	if g2 == nil || !hasProblem(g2.Problems(), rel, wantMsg) {
		t.Errorf("a scan does not report %s as too large", rel)
	}
}

// hasProblem reports whether ps holds a problem of rel whose message
// contains msg.
func hasProblem(ps []memgraph.Problem, rel, msg string) bool {
	for _, p := range ps {
		if p.Path == rel && strings.Contains(p.Msg, msg) {
			return true
		}
	}
	return false
}
