package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/memgraph/team"
)

// gitIn runs git in dir and returns its trimmed output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// stage writes a file into the proposals folder of team eng joined to repo.
func stage(t *testing.T, repo, rel, data string) {
	t.Helper()
	p := filepath.Join(team.ProposalsDir(filepath.Join(repo, ".git"), "eng"), rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

var proposedRE = regexp.MustCompile(`proposed (mindmount/proposal/\S+)`)

// TestTeamProposeAndReview: a proposer's staged file becomes a branch of
// the team's clone, never its HEAD or work tree; after a push and a
// fetch a maintainer lists it, approves it into HEAD (a merge commit,
// the file in the work tree) or rejects it (nothing left); a proposer
// may not approve, and a reader may not propose.
func TestTeamProposeAndReview(t *testing.T) {
	base := t.TempDir()
	remote, bob, carol, dave := filepath.Join(base, "eng"), filepath.Join(base, "bob"), filepath.Join(base, "carol"), filepath.Join(base, "dave")
	for _, d := range []string{remote, bob, carol, dave} {
		runCmd(t, "init", d, "--user", filepath.Base(d))
	}
	runCmd(t, "team", "join", bob, remote, "--role", "propose")
	runCmd(t, "team", "join", carol, remote, "--role", "maintain")
	runCmd(t, "team", "join", dave, remote, "--read-only")
	if out := runCmd(t, "team", "list", bob); !strings.Contains(out, "eng\tpropose") {
		t.Fatalf("team list: %s", out)
	}
	bobClone := filepath.Join(team.LaptopDir(filepath.Join(bob, ".git")), "eng")
	carolClone := filepath.Join(team.LaptopDir(filepath.Join(carol, ".git")), "eng")
	head := gitIn(t, bobClone, "rev-parse", "HEAD")
	mem := "---\ndescription: No deploys on Fridays\nstatus: active\n---\n# No Friday Deploys\n\n## Fact\nThe team never deploys on a Friday.\n"
	stage(t, bob, "user_memory/no-friday-deploys.md", mem)
	m := proposedRE.FindStringSubmatch(runCmd(t, "team", "propose", bob, "eng", "-m", "no Friday deploys"))
	if m == nil {
		t.Fatal("team propose printed no branch")
	}
	branch := m[1]
	if gitIn(t, bobClone, "rev-parse", "HEAD") != head || gitIn(t, bobClone, "status", "--porcelain") != "" {
		t.Fatal("the proposal moved the clone's HEAD or changed its work tree")
	}
	if _, err := os.Stat(filepath.Join(bobClone, "user_memory/no-friday-deploys.md")); err == nil {
		t.Fatal("the proposed file is in the team's work tree")
	}
	var out, errb bytes.Buffer
	if code := run([]string{"review", "approve", "--team", "eng", "--tip", "0000000", bob, branch}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "maintain") {
		t.Fatalf("a proposer approved: exit %d %s", code, errb.String())
	}
	stage(t, dave, "user_memory/x.md", mem)
	if code := run([]string{"team", "propose", dave, "eng"}, &out, &errb); code == 0 {
		t.Fatal("a reader proposed")
	}
	// The laptop flow: the proposer pushes the branch, the maintainer fetches.
	gitIn(t, bobClone, "push", "-q", "origin", branch)
	gitIn(t, carolClone, "fetch", "-q", "origin", "refs/heads/mindmount/proposal/*:refs/heads/mindmount/proposal/*")
	list := runCmd(t, "review", "list", "--team", "eng", carol)
	tip := gitIn(t, carolClone, "rev-parse", branch)
	if !strings.Contains(list, branch) || !strings.Contains(list, tip) || !strings.Contains(list, "user_memory/no-friday-deploys.md") {
		t.Fatalf("review list:\n%s", list)
	}
	if show := runCmd(t, "review", "show", "--team", "eng", carol, branch); !strings.Contains(show, "+The team never deploys on a Friday.") {
		t.Fatalf("review show:\n%s", show)
	}
	runCmd(t, "review", "approve", "--team", "eng", "--tip", tip[:12], carol, branch)
	if got := gitIn(t, carolClone, "log", "-1", "--format=%P"); got != head+" "+tip {
		t.Fatalf("approval's parents %q, want %s %s", got, head, tip)
	}
	if b, err := os.ReadFile(filepath.Join(carolClone, "user_memory/no-friday-deploys.md")); err != nil || string(b) != mem {
		t.Fatalf("approved file in the work tree: %q, %v", b, err)
	}
	if gitIn(t, carolClone, "branch", "--list", "mindmount/proposal/*") != "" {
		t.Fatal("the approved branch stays")
	}
	// A second proposal, rejected: nothing of it stays.
	stage(t, bob, "user_memory/tabs.md", strings.Replace(mem, "Friday", "tab", -1))
	branch2 := proposedRE.FindStringSubmatch(runCmd(t, "team", "propose", bob, "eng"))[1]
	gitIn(t, bobClone, "push", "-q", "origin", branch2)
	gitIn(t, carolClone, "fetch", "-q", "origin", "refs/heads/mindmount/proposal/*:refs/heads/mindmount/proposal/*")
	if list := runCmd(t, "review", "list", "--team", "eng", carol); strings.Contains(list, branch+"\t") || !strings.Contains(list, branch2) {
		t.Fatalf("review list after a fetch brought the approved branch back:\n%s", list)
	}
	gitIn(t, carolClone, "branch", "-D", branch) // approved: gone on the remote too, by hand
	approved := gitIn(t, carolClone, "rev-parse", "HEAD")
	runCmd(t, "review", "reject", "--team", "eng", carol, branch2)
	if gitIn(t, carolClone, "rev-parse", "HEAD") != approved || gitIn(t, carolClone, "branch", "--list", "mindmount/proposal/*") != "" {
		t.Fatal("a rejection moved HEAD or left the branch")
	}
	if _, err := os.Stat(filepath.Join(carolClone, "user_memory/tabs.md")); err == nil {
		t.Fatal("the rejected file is in the work tree")
	}
}

// TestTeamProposeRefusesALink: a symbolic link staged for a proposal
// (here to the proposer's own personal memory, a canary in it) is
// refused, never followed: the canary reaches no branch of the team.
func TestTeamProposeRefusesALink(t *testing.T) {
	base := t.TempDir()
	remote, bob := filepath.Join(base, "eng"), filepath.Join(base, "bob")
	runCmd(t, "init", remote, "--user", "eng")
	runCmd(t, "init", bob, "--user", "bob")
	runCmd(t, "team", "join", bob, remote, "--role", "propose")
	secret := filepath.Join(bob, "user_memory", "private-canary.md")
	if err := os.WriteFile(secret, []byte("---\ndescription: private\n---\n# Private\n\ncanary-b0b-5ecret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stage := team.ProposalsDir(filepath.Join(bob, ".git"), "eng")
	os.MkdirAll(filepath.Join(stage, "user_memory"), 0o700)
	if err := os.Symlink(secret, filepath.Join(stage, "user_memory", "leak.md")); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"team", "propose", bob, "eng"}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "not a regular file") {
		t.Fatalf("a staged link: exit %d %s", code, errb.String())
	}
	clone := filepath.Join(team.LaptopDir(filepath.Join(bob, ".git")), "eng")
	if got := gitIn(t, clone, "branch", "--list", "mindmount/proposal/*"); got != "" {
		t.Fatalf("a branch was made: %s", got)
	}
}
