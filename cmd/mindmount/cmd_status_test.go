package main

import (
	"os"
	"os/exec"
	"path/filepath"
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

// TestStatusRootReadsAsTheOwner: "mindmount status --root" run as root
// reads each user's last commit with that user's rights, never its own.
// Root runs here without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, and
// alice's .git is hers alone (0700): root-side code that opened her
// repository could not read it and would print "-"; the owner's reader
// prints her last commit. Root-owned bob is read in-process.
func TestStatusRootReadsAsTheOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the repository belongs to another uid")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux) to drop root's DAC capabilities")
	}
	root := serveRoot(t)
	alice := host.UserDir(root, "alice")
	// Her folder may be traversed (a stat of .git and character.md says
	// it is a repository); what is inside .git is hers alone.
	if err := os.Chmod(alice, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(alice, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-c", "safe.directory=*", "-C", alice, "log", "-1", "--format=%h").Output()
	want := strings.TrimSpace(string(head))
	if err != nil || want == "" {
		t.Fatalf("alice's HEAD: %v", err)
	}
	caps := "-dac_override,-dac_read_search"
	cmd := exec.Command("setpriv", "--inh-caps="+caps, "--bounding-set="+caps, "--", mindmountBinary(t), "status", "--root", root)
	cmd.Env = append(os.Environ(), "HOME=/nonexistent")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("status --root: %v\n%s", err, out)
	}
	var line string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "alice ") {
			line = l
		}
	}
	if !strings.Contains(line, want) {
		t.Fatalf("alice's last commit %s is not in her line %q:\n%s", want, line, out)
	}
	if left := rootOwned(t, alice); len(left) > 0 {
		t.Errorf("status --root left files of root's in alice's repository: %v", left)
	}
}
