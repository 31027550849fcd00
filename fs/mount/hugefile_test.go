package mount

import (
	"context"
	"io"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/memgraph/secret/secrettest"
)

// TestHugeFileThroughMount: a 60 MB file of random bytes written through
// the mount is scanned for secrets in bounded memory — committed or held
// back with a status line, never a crash — and a file written after it
// is committed. The heap the process holds beyond what it held before
// stays under a bound that the old scan (the whole file's printable runs,
// and copies of them) went far past.
func TestHugeFileThroughMount(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and scans 60 MB")
	}
	tm := mountRepo(t, newRepo(t, nil), Options{})
	const size = 60_000_000
	peak := secrettest.HeapPeak(func() {
		f, err := os.Create(tm.p("files/huge.bin"))
		if os.IsNotExist(err) {
			os.MkdirAll(tm.p("files"), 0o755)
			f, err = os.Create(tm.p("files/huge.bin"))
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.CopyN(f, rand.New(rand.NewSource(1)), size); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		tm.write("notes/after.md", "# After\n\nwritten after the big one\n")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if err := tm.tr.Settle(ctx); err != nil {
			t.Fatalf("settle: %v", err)
		}
	})
	t.Logf("heap peak %.0f MiB beyond the start for a %d MB file", float64(peak)/(1<<20), size/1_000_000)
	if _, err := runGit(tm.dir, "cat-file", "-e", "HEAD:notes/after.md"); err != nil {
		t.Errorf("the file written after the big one is not committed")
	}
	if _, err := runGit(tm.dir, "cat-file", "-e", "HEAD:files/huge.bin"); err != nil {
		if status := tm.read(".mindmount/status"); !strings.Contains(status, "files/huge.bin") {
			t.Errorf("huge.bin neither committed nor reported in the status:\n%s", status)
		}
	}
	// The file itself (held by the tracker and by git's commit of it) and
	// what a scan holds: well under the old scan's hundreds of MiB.
	if bound := uint64(5 * size); peak > bound {
		t.Errorf("the process held %d MiB of heap for a %d MB file, over %d MiB", peak>>20, size/1_000_000, bound>>20)
	}
}

func runGit(dir string, args ...string) (string, error) {
	out, err := inDir(dir, "git", args...).CombinedOutput()
	return string(out), err
}
