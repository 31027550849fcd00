package host

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestIdleSweeps: the one idle loop of Host and Workers sweeps on every
// tick, re-reads the registry only when it changed beside the daemon,
// and ends with its context.
func TestIdleSweeps(t *testing.T) {
	root := t.TempDir()
	var reloads atomic.Int32
	reg := &registryView{root: root, log: slog.Default()}
	reg.reload = func() error { reloads.Add(1); reg.read(registryStamp(root)); return nil }
	reg.read(registryStamp(root))
	ctx, cancel := context.WithCancel(context.Background())
	swept, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		idleSweeps(ctx, time.Millisecond, reg, func(ctx context.Context) {
			select {
			case swept <- struct{}{}:
			case <-ctx.Done():
			}
		})
	}()
	<-swept
	<-swept
	if n := reloads.Load(); n != 0 {
		t.Fatalf("an unchanged registry was read again %d times", n)
	}
	// "mindmount users add" in another process.
	if err := os.WriteFile(filepath.Join(root, RegistryFile), []byte(`{"users":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The tick under way may have looked before the change: two more.
	<-swept
	<-swept
	if n := reloads.Load(); n != 1 {
		t.Fatalf("the changed registry was read %d times, want once", n)
	}
	cancel()
	<-done
}

// TestStatusOfWithoutDaemon: the status of a ROOT read from disk reads the
// registry once and never tries to re-read it (it has no Reload), and its
// header says it was read from disk instead of a loaded count it cannot
// know.
func TestStatusOfWithoutDaemon(t *testing.T) {
	root := t.TempDir()
	if _, err := InitRepo(UserDir(root, "alice"), InitOptions{Private: true}); err != nil {
		t.Fatal(err)
	}
	if err := AddUser(root, Entry{ID: "alice", UID: testUID(root, "alice"), GID: testUID(root, "alice")}); err != nil {
		t.Fatal(err)
	}
	b, err := StatusOf(root, LastCommitLine)
	if err != nil || !strings.Contains(string(b), "alice") {
		t.Fatalf("%s, %v", b, err)
	}
	// What is read from disk says so: not "0 loaded (unload after 0s
	// idle)" while a daemon's workers may be running.
	if !strings.Contains(string(b), "users: 1 registered, read from disk") || strings.Contains(string(b), "unload after") {
		t.Errorf("the summary claims what the disk cannot know:\n%s", b)
	}
}
