package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/serve/host"
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

// TestStatusAsRootRunsNoUserProgram: root's "mindmount status" on alice's
// repository runs none of the programs her git configuration names
// (gpg.program with log.showSignature on a signed consolidation commit,
// core.fsmonitor), and still reports her last consolidation.
func TestStatusAsRootRunsNoUserProgram(t *testing.T) {
	root := serveRoot(t)
	p := plantGitPrograms(t, host.UserDir(root, "alice"), aliceUID)
	out, code := runBinary(t, []string{"HOME=/nonexistent"}, "status", p.dir)
	p.ranAs(t, "mindmount status")
	if code != 0 || !regexp.MustCompile(`last consolidation: [0-9a-f]+ consolidate: planted`).MatchString(out) {
		t.Errorf("status: exit %d\n%s", code, out)
	}
	if left := rootOwned(t, p.dir); len(left) > 0 {
		t.Errorf("status left files of root's in alice's repository: %v", left)
	}
}
