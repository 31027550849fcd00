package gitrepo

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo/failpoint"
)

// staleRepo commits n memories, then makes every file's stat data stale
// without changing its content, as a chown after the commit does: the
// mtime moves an hour back (the ctime moves to now) and, as root, the
// owner changes.
func staleRepo(t *testing.T, n int) (*Repo, string) {
	t.Helper()
	r, dir := tempRepo(t)
	var cs []Change
	for i := range n {
		cs = append(cs, put(fmt.Sprintf("user_memory/m-%02d.md", i), fmt.Sprintf("memory %d\n", i)))
	}
	apply(t, r, "seed", cs...)
	past := time.Now().Add(-time.Hour)
	for _, c := range cs {
		abs := filepath.Join(dir, filepath.FromSlash(c.Path))
		if err := os.Chtimes(abs, past, past); err != nil {
			t.Fatal(err)
		}
		if os.Geteuid() == 0 {
			if err := os.Chown(abs, 54321, 54321); err != nil {
				t.Fatal(err)
			}
		}
	}
	return r, dir
}

// countHashes runs Dirty and returns how many files it hashed; it fails
// the test when anything is reported dirty.
func countHashes(t *testing.T, r *Repo) int {
	t.Helper()
	var n atomic.Int64
	hashHook = func(rel string) {
		if rel != "refresh" {
			n.Add(1)
		}
	}
	defer func() { hashHook = nil }()
	dirty, err := r.Dirty()
	if err != nil {
		t.Fatal(err)
	}
	if len(dirty) != 0 {
		t.Fatalf("dirty: %v", dirty)
	}
	return int(n.Load())
}

// TestDirtyRefreshesStatData: the writer's Dirty hashes each file whose
// stat data went stale once, stores fresh stat data, and the next Dirty
// (the next start) hashes none; git agrees the tree is clean.
func TestDirtyRefreshesStatData(t *testing.T) {
	const n = 20
	r, dir := staleRepo(t, n)
	unlock, err := r.LockDaemon()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if got := countHashes(t, r); got != n {
		t.Fatalf("first Dirty hashed %d files, want %d", got, n)
	}
	if got := countHashes(t, r); got != 0 {
		t.Fatalf("second Dirty hashed %d files, want 0 (stat data not stored)", got)
	}
	r2, err := Open(dir) // a new process: the index on disk, not the cache
	if err != nil {
		t.Fatal(err)
	}
	if got := countHashes(t, r2); got != 0 {
		t.Fatalf("Dirty after a restart hashed %d files, want 0", got)
	}
	checkClean(t, dir)
	// Fresh stat data never hides a change: same size, new content.
	abs := filepath.Join(dir, "user_memory/m-03.md")
	if err := os.WriteFile(abs, []byte("memory X\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := r.Dirty(); err != nil || len(d) != 1 || d[0] != "user_memory/m-03.md" {
		t.Fatalf("after a change: %v, %v", d, err)
	}
}

// TestDirtyReaderNeverWrites: a process that is not the repository's
// writer (no daemon lock: mindmount index, another user) hashes again at
// every call and leaves .git/index byte for byte as it was.
func TestDirtyReaderNeverWrites(t *testing.T) {
	const n = 10
	r, dir := staleRepo(t, n)
	before, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	for range 2 {
		if got := countHashes(t, r); got != n {
			t.Fatalf("reader's Dirty hashed %d, want %d", got, n)
		}
	}
	after, _ := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if !bytes.Equal(before, after) {
		t.Fatal("a reader's Dirty rewrote .git/index")
	}
}

// TestDirtyRefreshLeavesForeignLock: while a git command holds
// index.lock, Dirty neither waits nor writes; the lock is left alone.
func TestDirtyRefreshLeavesForeignLock(t *testing.T) {
	const n = 5
	r, dir := staleRepo(t, n)
	unlock, err := r.LockDaemon()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	lock := filepath.Join(dir, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := countHashes(t, r); got != n {
		t.Fatalf("hashed %d, want %d", got, n)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatal("foreign index.lock removed")
	}
	os.Remove(lock)
	if got := countHashes(t, r); got != n {
		t.Fatalf("hashed %d after the lock went, want %d (nothing was stored under it)", got, n)
	}
	if got := countHashes(t, r); got != 0 {
		t.Fatalf("hashed %d, want 0", got)
	}
}

// TestDirtyRefreshCrash kills the writer at each point of the index
// refresh: what it leaves is a valid index (git fsck and status clean
// after RecoverLocks), and Dirty afterwards reports nothing.
func TestDirtyRefreshCrash(t *testing.T) {
	for _, point := range []string{failpoint.RefreshLocked, failpoint.RefreshWritten, failpoint.RefreshRenamed} {
		t.Run(point, func(t *testing.T) {
			_, dir := staleRepo(t, 8)
			crashChild(t, dir, point, "dirty", "")
			r, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.RecoverLocks(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, ".git", "index.lock")); err == nil {
				t.Fatal("index.lock left after RecoverLocks")
			}
			checkClean(t, dir)
			if ls := gitCmd(t, dir, "ls-files"); len(bytes.Fields([]byte(ls))) != 8 {
				t.Fatalf("index lost entries:\n%s", ls)
			}
			unlock, err := r.LockDaemon()
			if err != nil {
				t.Fatal(err)
			}
			defer unlock()
			countHashes(t, r)
			if got := countHashes(t, r); got != 0 {
				t.Fatalf("hashed %d after recovery, want 0", got)
			}
		})
	}
}
