package tracker_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
)

// TestBackgroundPacking is issue 16.3 in the tracker: once commits leave
// more loose objects than PackThreshold, Run packs them in the background
// while writes and commits go on, and the repository stays sound.
func TestBackgroundPacking(t *testing.T) {
	dir := conformance.NewRepo(t)
	tr, _ := watch(t, dir, tracker.Config{Debounce: 10 * time.Millisecond, PackThreshold: 1})
	for i := 0; i < 40; i++ {
		conformance.WriteFile(t, dir, fmt.Sprintf("user_memory/m-%02d.md", i), conformance.Memory(fmt.Sprintf("M %d", i), "M", "Yes."))
		settle(t, tr)
	}
	// A pack that fails is retried after a later commit (packLoop), so
	// keep committing, slowly: the test is about packing happening at all.
	deadline := time.Now().Add(60 * time.Second)
	for extra := 0; ; extra++ {
		packs, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.pack"))
		if len(packs) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pack written after %d commits with PackThreshold 1", 40+extra/50)
		}
		if extra%50 == 49 {
			conformance.WriteFile(t, dir, fmt.Sprintf("user_memory/late-%02d.md", extra/50), conformance.Memory("Late", "M", "Yes."))
			settle(t, tr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Commits after the pack still work and read objects moved into it.
	conformance.WriteFile(t, dir, "user_memory/likes-tea.md", conformance.LikesTea+"\nMore.\n")
	settle(t, tr)
	tr.WithoutPacking(func() { conformance.CheckRepo(t, dir) })
}
