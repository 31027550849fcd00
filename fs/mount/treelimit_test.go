package mount

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/fs/tracker"
)

// setTreeLimit writes the operator's tree_limit_mib into dir's
// .git/mindmount/config.
func setTreeLimit(t *testing.T, dir string, mib int) {
	t.Helper()
	p := filepath.Join(dir, ".git", "mindmount", "config")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(fmt.Sprintf("tree_limit_mib: %d\n", mib)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTreeLimitThroughMount: with tree_limit_mib: 1, dd past the limit
// through the mount fails with ENOSPC; the files already there are intact
// and committed as before; a truncate or fallocate past the limit is
// refused too; after the big file is deleted a small edit elsewhere works
// and is committed.
func TestTreeLimitThroughMount(t *testing.T) {
	dir := newRepo(t, nil)
	setTreeLimit(t, dir, 1)
	tm := mountRepo(t, dir, Options{})
	before := tm.read("user_memory/likes-tea.md")
	if err := os.MkdirAll(tm.p("files"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("dd", "if=/dev/zero", "of="+tm.p("files/big.bin"), "bs=64k", "count=32").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "No space left on device") {
		t.Fatalf("dd of 2 MiB into a 1 MiB tree: err %v, want ENOSPC:\n%s", err, out)
	}
	if got := tm.read("user_memory/likes-tea.md"); got != before {
		t.Fatalf("an existing memory changed: %q", got)
	}
	fi, err := os.Stat(tm.p("files/big.bin"))
	if err != nil || fi.Size() > 1<<20 {
		t.Fatalf("big.bin: %v, size past the limit: %v", err, fi)
	}
	if err := os.Truncate(tm.p("files/big.bin"), 8<<20); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("truncate to 8 MiB: %v, want ENOSPC", err)
	}
	if f, err := os.OpenFile(tm.p("files/big.bin"), os.O_WRONLY, 0); err == nil {
		if err := unix.Fallocate(int(f.Fd()), 0, 0, 8<<20); !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EOPNOTSUPP) {
			t.Errorf("fallocate to 8 MiB: %v, want ENOSPC", err)
		}
		f.Close()
	}
	tm.settle()
	if err := os.Remove(tm.p("files/big.bin")); err != nil {
		t.Fatal(err)
	}
	tm.write("user_memory/likes-tea.md", before+"\nAlso oolong on Sundays.\n")
	tm.settle()
	if got := git(t, dir, "show", "HEAD:user_memory/likes-tea.md"); !strings.Contains(got, "oolong") {
		t.Fatalf("the edit after the delete is not committed:\n%s", got)
	}
	used, limit := tm.tr.TreeUsage()
	if limit != 1<<20 || used <= 0 || used > limit {
		t.Errorf("usage %d of %d", used, limit)
	}
}

// TestTreeLimitCountsBesideTheMount: a file written beside the mount (in
// the backing tree, as consolidation or a sync writes) counts: the next
// write through the mount that would pass the limit is refused.
func TestTreeLimitCountsBesideTheMount(t *testing.T) {
	dir := newRepo(t, nil)
	setTreeLimit(t, dir, 1)
	tm := mountRepo(t, dir, Options{})
	tm.tr.TreeUsage() // the count is made before the file beside appears
	if err := os.WriteFile(tm.b("beside.bin"), make([]byte, 900<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	tm.settle()
	err := os.WriteFile(tm.p("notes.txt"), make([]byte, 200<<10), 0o644)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("200 KiB after 900 KiB beside the mount: %v, want ENOSPC", err)
	}
	if !errors.Is(&tracker.TreeFullError{}, tracker.ErrTreeFull) {
		t.Fatal("TreeFullError is not ErrTreeFull")
	}
}
