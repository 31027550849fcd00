package mount

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// TestControlFileEveryRequestCounts: a second request written soon after
// the first (within a second: a run finished, git revert, ask again) is
// not dropped, while one write(2) the kernel splits into several WRITEs
// still asks once.
func TestControlFileEveryRequestCounts(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	asked := func(what string) {
		t.Helper()
		select {
		case <-tm.consolidations:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no consolidation requested", what)
		}
	}
	for i, what := range []string{"first echo", "second echo 50ms later", "third echo"} {
		if err := os.WriteFile(tm.p(".mindmount/consolidate"), []byte("now\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		asked(what)
		if i == 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	// 1 MiB in one write(2): several WRITEs at following offsets.
	f, err := os.OpenFile(tm.p(".mindmount/consolidate"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.Write(bytes.Repeat([]byte("x"), 1<<20)); err != nil || n != 1<<20 {
		t.Fatalf("write: %d %v", n, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	asked("one large write")
	select {
	case <-tm.consolidations:
		t.Errorf("one write(2) asked twice")
	case <-time.After(300 * time.Millisecond):
	}
}
