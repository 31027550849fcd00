package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestUpgradeGitDir: what the build before the rename kept in .git moves
// to today's names; what this build already wrote there wins; a second run
// moves nothing.
func TestUpgradeGitDir(t *testing.T) {
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	g := r.GitDir()
	write := func(rel, data string) {
		p := filepath.Join(g, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("engram-daemon.lock", "4242\n")
	write("engram-index.owner", "old owner\n")
	write("engram-deep-pack", "12\n")
	write("engram/cursor-floor.json", "old floor\n")
	write("engram/sync.json", "old sync\n")
	write("engram/sync.sock", "")
	write("mindmount/sync.json", "new sync\n") // this build's: kept
	write("engramx", "not ours\n")

	moved, err := r.UpgradeGitDir()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".git/engram-deep-pack -> .git/mindmount-deep-pack", ".git/engram-index.owner -> .git/mindmount-index.owner", ".git/engram/ -> .git/mindmount/"}
	if !slices.Equal(moved, want) {
		t.Errorf("moved %q\nwant %q", moved, want)
	}
	for rel, want := range map[string]string{
		"mindmount-index.owner":       "old owner\n",
		"mindmount-deep-pack":         "12\n",
		"mindmount/cursor-floor.json": "old floor\n",
		"mindmount/sync.json":         "new sync\n",
		"engramx":                     "not ours\n",
	} {
		if b, err := os.ReadFile(filepath.Join(g, rel)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", rel, b, err, want)
		}
	}
	for _, gone := range []string{"engram-daemon.lock", "engram-index.owner", "engram", "mindmount/sync.sock"} {
		if _, err := os.Lstat(filepath.Join(g, gone)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind: %v", gone, err)
		}
	}
	if again, err := r.UpgradeGitDir(); err != nil || len(again) != 0 {
		t.Errorf("second run: %q, %v", again, err)
	}
}

// TestUpgradeGitDirRefusesRunningOldDaemon: while an old daemon holds its
// lock, nothing is moved.
func TestUpgradeGitDirRefusesRunningOldDaemon(t *testing.T) {
	r, err := Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(r.GitDir(), "engram-daemon.lock")
	os.WriteFile(lock, []byte("4242\n"), 0o644)
	os.MkdirAll(filepath.Join(r.GitDir(), "engram"), 0o755)
	f, err := os.OpenFile(lock, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// An flock belongs to the open file: this one stands for the old daemon.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	moved, err := r.UpgradeGitDir()
	if !errors.Is(err, ErrLegacyDaemonRunning) || len(moved) != 0 {
		t.Fatalf("UpgradeGitDir under a running old daemon: %q, %v", moved, err)
	}
	if _, err := os.Stat(filepath.Join(r.GitDir(), "engram")); err != nil {
		t.Errorf(".git/engram moved under a running daemon: %v", err)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Errorf("the running daemon's lock was removed: %v", err)
	}
}
