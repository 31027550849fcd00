package tracker_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
	"github.com/mindmount/mindmount/memgraph"
)

// A bad .mindmount/settings is judged like an invalid memory: reported, kept on
// disk, not committed; a good one is committed.
func TestSettingsFileJudged(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _ := watch(t, dir, tracker.Config{})
	conformance.WriteFile(t, dir, memgraph.SettingsFile, "index_tokens: lots\n")
	settle(t, tr)
	if _, ok := conformance.HeadFile(t, dir, memgraph.SettingsFile); ok {
		t.Fatal("invalid settings committed")
	}
	if st := string(tr.Status()); !strings.Contains(st, memgraph.SettingsFile+":1: ") {
		t.Errorf("status lacks the settings problem:\n%s", st)
	}
	conformance.WriteFile(t, dir, memgraph.SettingsFile, "index_tokens: 3000\n")
	settle(t, tr)
	if data, ok := conformance.HeadFile(t, dir, memgraph.SettingsFile); !ok || !strings.Contains(data, "3000") {
		t.Fatalf("valid settings not committed: %q %v", data, ok)
	}
	if len(tr.Invalid()) != 0 {
		t.Errorf("still reported: %v", tr.Invalid())
	}
}

func TestJudged(t *testing.T) {
	for rel, want := range map[string]bool{
		"user_memory/tea.md":     true,
		memgraph.SettingsFile:    true,
		"transcripts/a.jsonl":    false,
		".mindmount/cursor.json": false,
	} {
		if got := tracker.Judged(rel); got != want {
			t.Errorf("Judged(%q) = %v, want %v", rel, got, want)
		}
	}
}

// lockedBuffer is a log sink the tracker's goroutines write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Deleting an invalid file ends its report, and the log says it was
// removed, not that it became valid.
func TestInvalidFileRemovedIsNotCalledValid(t *testing.T) {
	dir := conformance.NewRepo(t)
	var logs lockedBuffer
	tr, _ := watch(t, dir, tracker.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	rel := "user_memory/broken.md"
	conformance.WriteFile(t, dir, rel, "---\ndescription: ok\nmood: grumpy\n---\n# Broken\n")
	settle(t, tr)
	if len(tr.Invalid()) == 0 {
		t.Fatal("invalid file not reported")
	}
	if err := os.Remove(filepath.Join(dir, rel)); err != nil {
		t.Fatal(err)
	}
	settle(t, tr)
	if len(tr.Invalid()) != 0 {
		t.Fatalf("still reported: %v", tr.Invalid())
	}
	if strings.Contains(logs.String(), "file is valid again") || !strings.Contains(logs.String(), "invalid file removed") {
		t.Fatalf("log:\n%s", logs.String())
	}
}
