package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/memgraph/team"
)

// engUID is the team eng's uid and group in these tests.
const engUID = 2350

const engCanary = "CANARY-team-eng-6c1e"

// serveTeamRoot makes a serve ROOT with alice, bob and carol, and the team
// eng (alice write, bob read, carol none) whose repository holds a memory
// with engCanary, committed.
func serveTeamRoot(t *testing.T) (root, engDir string) {
	t.Helper()
	root = serveRoot(t)
	runCmd(t, "users", "add", root, "carol", "--uid", itoa(carolUID))
	engDir = filepath.Join(root, team.Dir, "eng")
	runCmd(t, "init", engDir)
	os.WriteFile(filepath.Join(engDir, "user_memory/eng-canary.md"), []byte(strings.Replace(teaMemory, "You like tea.", engCanary, 1)), 0o644)
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", "eng canary"}} {
		if out, err := exec.Command("git", append([]string{"-C", engDir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	runCmd(t, "teams", "add", root, "eng", "--uid", itoa(engUID))
	runCmd(t, "teams", "member", root, "eng", "alice", "--role", "write")
	runCmd(t, "teams", "member", root, "eng", "bob", "--role", "read")
	return root, engDir
}

// waitAs runs script as uid until ok says its output and error are what
// the test waits for; only a hang (a minute) fails. It returns how long
// it took.
func waitAs(t *testing.T, s *served, uid int, script string, ok func(string, error) bool) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		out, err := as(uid, "sh", "-c", script)
		if ok(out, err) {
			return time.Since(start)
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("a minute waiting as %d for %q: %v\n%s\n%s", uid, script, err, out, s.logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// workerGroups is the Groups: line of user id's worker.
func workerGroups(t *testing.T, root, id string) string {
	t.Helper()
	for _, l := range strings.Split(readProc(workerOf(t, id, root), "status"), "\n") {
		if strings.HasPrefix(l, "Groups:") {
			return l
		}
	}
	return ""
}

// noEngCanary: carol's grep -r over her whole mount and a direct read of
// the team's repository with her uid find no canary of eng, and her
// worker does not have eng's group.
func noEngCanary(t *testing.T, s *served, root, engDir string) {
	t.Helper()
	carol := filepath.Join(s.mnt, "carol")
	waitAs(t, s, carolUID, "cat "+carol+"/user.md", func(_ string, err error) bool { return err == nil })
	if out, _ := as(carolUID, "grep", "-r", engCanary, carol); strings.Contains(out, engCanary) {
		t.Fatalf("carol's grep -r found eng's canary:\n%s", out)
	}
	if out, err := as(carolUID, "ls", carol+"/shared"); err == nil {
		t.Fatalf("carol sees shared/: %s", out)
	}
	if out, err := as(carolUID, "cat", filepath.Join(engDir, "user_memory/eng-canary.md")); err == nil || strings.Contains(out, engCanary) {
		t.Fatalf("carol's uid read eng's repository: %v %s", err, out)
	}
	if g := workerGroups(t, root, "carol"); strings.Contains(g, itoa(engUID)) {
		t.Fatalf("carol's worker has eng's group: %s", g)
	}
}

// TestServeTeamProjection: eng's members see it at MNT/<user>/shared/eng/
// (their workers have its group); carol, no member, finds no canary of
// eng through her mount nor with her uid, before she joins and after she
// leaves; joining and leaving take effect on the running workers, and a
// descriptor carol held under shared/eng/ fails once she is removed.
func TestServeTeamProjection(t *testing.T) {
	requireRootFUSE(t)
	root, engDir := serveTeamRoot(t)
	s := startServe(t, root, serveOpts{})
	for _, u := range []struct {
		id  string
		uid int
	}{{"alice", aliceUID}, {"bob", bobUID}} {
		f := filepath.Join(s.mnt, u.id, "shared/eng/user_memory/eng-canary.md")
		waitAs(t, s, u.uid, "cat "+f, func(out string, err error) bool { return err == nil && strings.Contains(out, engCanary) })
		if g := workerGroups(t, root, u.id); !strings.Contains(g, itoa(engUID)) {
			t.Fatalf("%s's worker lacks eng's group: %s", u.id, g)
		}
	}
	// The context and the recall of a member read across the team.
	if out, err := as(aliceUID, "cat", filepath.Join(s.mnt, "alice/CONTEXT.md")); err != nil || !strings.Contains(out, "shared/eng") {
		t.Errorf("alice's CONTEXT.md does not name shared/eng: %v\n%s", err, out)
	}
	noEngCanary(t, s, root, engDir)

	runCmd(t, "teams", "member", root, "eng", "carol", "--role", "read")
	carolEng := filepath.Join(s.mnt, "carol/shared/eng")
	took := waitAs(t, s, carolUID, "cat "+carolEng+"/user_memory/eng-canary.md", func(out string, err error) bool { return err == nil && strings.Contains(out, engCanary) })
	t.Logf("carol added: she read eng after %v", took)

	held := holdUnder(t, carolUID, carolEng, "user_memory/eng-canary.md")
	removed := time.Now()
	runCmd(t, "teams", "member", root, "eng", "carol", "--remove")
	took = waitAs(t, s, carolUID, "ls "+carolEng, func(_ string, err error) bool { return err != nil })
	t.Logf("carol removed: shared/eng refused after %v", took)
	// The kernel may serve a page of a file she holds open from its cache
	// while what it knows of the file is fresh (fs/mount's revokeWithin,
	// 0.5 s); a removal takes effect within a second: ask after that.
	time.Sleep(time.Until(removed.Add(time.Second)))
	if out := held(); !strings.Contains(out, "dir=fail") || !strings.Contains(out, "fd=fail") {
		t.Fatalf("carol's descriptors under shared/eng still work after her removal:\n%s", out)
	}
	noEngCanary(t, s, root, engDir)
}

// holdUnder starts a shell as uid whose working folder is dir and which
// holds rel open (read once); the returned function lets it go on, and
// returns whether listing its folder and reading the held descriptor
// then fail.
func holdUnder(t *testing.T, uid int, dir, rel string) func() string {
	t.Helper()
	cmd := exec.Command("setpriv", "--reuid", itoa(uid), "--regid", itoa(uid), "--clear-groups", "--", "sh", "-c",
		`cd `+dir+` && exec 3< `+rel+` && cat `+rel+` >/dev/null && echo ready && read x;
if ls . >/dev/null 2>&1; then echo dir=ok; else echo dir=fail; fi
if cat <&3 >/dev/null 2>&1; then echo fd=ok; else echo fd=fail; fi`)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := bufio.NewReader(out)
	if l, err := r.ReadString('\n'); err != nil || l != "ready\n" {
		t.Fatalf("the holding shell: %q %v", l, err)
	}
	return func() string {
		io.WriteString(in, "go\n")
		in.Close()
		b, _ := io.ReadAll(r)
		cmd.Wait()
		return string(b)
	}
}

// TestServeTeamReadRole: every mutating call of a member whose role is
// read is refused with EROFS under shared/eng/, and the team's HEAD, tree
// and memory do not change.
func TestServeTeamReadRole(t *testing.T) {
	requireRootFUSE(t)
	root, engDir := serveTeamRoot(t)
	s := startServe(t, root, serveOpts{})
	eng := filepath.Join(s.mnt, "bob/shared/eng")
	f := "user_memory/eng-canary.md"
	waitAs(t, s, bobUID, "cat "+eng+"/"+f, func(out string, err error) bool { return err == nil })
	head := gitIn(t, engDir, "-c", "safe.directory=*", "rev-parse", "HEAD")
	for name, script := range map[string]string{
		"write":    "echo x > " + f,
		"append":   "echo x >> " + f,
		"create":   "echo x > user_memory/new.md",
		"mkdir":    "mkdir user_memory/sub",
		"rename":   "mv " + f + " user_memory/moved.md",
		"unlink":   "rm -f " + f,
		"truncate": "truncate -s 0 " + f,
		"chmod":    "chmod 600 " + f,
		"rmdir":    "rmdir user_memory",
	} {
		// bash names the errno of a failed write (dash's echo says "I/O
		// error" for any): >> is EROFS like every other change.
		out, err := as(bobUID, "bash", "-c", "cd "+eng+" && "+script)
		if err == nil || !strings.Contains(out, "Read-only file system") {
			t.Errorf("%s as a reader: %v %q, want EROFS\n%s", name, err, out, s.logs)
		}
	}
	if got := gitIn(t, engDir, "-c", "safe.directory=*", "rev-parse", "HEAD"); got != head {
		t.Fatalf("eng's HEAD moved: %s -> %s", head, got)
	}
	if st := gitIn(t, engDir, "-c", "safe.directory=*", "status", "--porcelain"); st != "" {
		t.Fatalf("eng's tree changed:\n%s", st)
	}
	if out, _ := as(bobUID, "cat", eng+"/"+f); !strings.Contains(out, engCanary) {
		t.Fatalf("the memory changed: %s", out)
	}
}
