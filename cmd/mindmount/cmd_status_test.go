package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate"
)

// mindmount status says when the memory was last consolidated, as the README's
// command table promises (issue 11.8).
func TestStatusShowsLastConsolidation(t *testing.T) {
	dir := mgRepo(t, mgFiles)
	out, errs, code := mgRun("status", dir)
	if code != 0 || !strings.Contains(out, "last consolidation: none yet") {
		t.Fatalf("before any consolidation: exit %d\n%s%s", code, out, errs)
	}
	a := consolidate.Author
	if b, err := exec.Command("git", "-C", dir, "-c", "user.name="+a.Name, "-c", "user.email="+a.Email,
		"commit", "-q", "--allow-empty", "-m", "consolidate: 1 memory added").CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v\n%s", err, b)
	}
	out, errs, code = mgRun("status", dir)
	if code != 0 || !strings.Contains(out, "consolidate: 1 memory added\n  at ") || !strings.Contains(out, "last consolidation: ") {
		t.Fatalf("after a consolidation: exit %d\n%s%s", code, out, errs)
	}
}
