package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mindmount/mindmount/memgraph/team"
	"github.com/mindmount/mindmount/serve/host"
)

// daveUID proposes to eng in these tests.
const daveUID = 2104

// sysPython is a python every test uid may run (a per-user one, pyenv's,
// may be root's only): setxattr and a bare connect(2) as another uid.
const sysPython = "/usr/bin/python3"

// engLog is a memory of eng the writers append to.
const engLog = "user_memory/eng-log.md"

// serveTeamWriteRoot is serveTeamRoot with dave (propose) and the memory
// engLog, committed.
func serveTeamWriteRoot(t *testing.T) (root, engDir string) {
	t.Helper()
	root, engDir = serveTeamRoot(t)
	runCmd(t, "users", "add", root, "dave", "--uid", itoa(daveUID))
	runCmd(t, "teams", "member", root, "eng", "dave", "--role", "propose")
	runCmd(t, "teams", "member", root, "eng", "alice", "--role", "maintain")
	os.WriteFile(filepath.Join(engDir, engLog), []byte("---\ndescription: What eng did\n---\n# Eng log\n\n## Fact\nThe log starts.\n"), 0o644)
	gitIn(t, engDir, "-c", "safe.directory=*", "add", "-A")
	gitIn(t, engDir, "-c", "safe.directory=*", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "eng log")
	return root, engDir
}

// engGit runs git in eng's repository as root (the team's uid owns it).
func engGit(t *testing.T, engDir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(gitIn(t, engDir, append([]string{"-c", "safe.directory=*"}, args...)...))
}

// waitTeamWriter waits until eng's writer answers on its socket: root is
// no member, so a change from this test is refused as a stranger's.
func waitTeamWriter(t *testing.T, s *served) {
	t.Helper()
	c := host.TeamClient{Socket: host.TeamSocket(s.root, "eng")}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := c.Put(context.Background(), engLog, "", []byte("x"))
		if errors.Is(err, team.ErrNotMember) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("eng's writer does not answer: %v\n%s", err, s.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeTeamWrite: alice (write) appends through her mount and eng's
// HEAD gets a commit authored alice with the Mindmount-User trailer;
// bob (read) is refused with EROFS (setxattr too) and HEAD stays; dave
// (propose) makes a proposal branch only, which nobody sees in their
// mount; carol (no member) cannot even connect to eng's writer.
func TestServeTeamWrite(t *testing.T) {
	requireRootFUSE(t)
	root, engDir := serveTeamWriteRoot(t)
	s := startServe(t, root, serveOpts{})
	waitTeamWriter(t, s)
	alice := filepath.Join(s.mnt, "alice/shared/eng", engLog)
	waitAs(t, s, aliceUID, "cat "+alice, func(out string, err error) bool { return err == nil })
	head := engGit(t, engDir, "rev-parse", "HEAD")
	if out, err := as(aliceUID, "bash", "-c", "echo ALICE-LINE >> "+alice); err != nil {
		t.Fatalf("alice's append: %v %s\n%s", err, out, s.logs)
	}
	msg := engGit(t, engDir, "log", "-1", "--format=%an%n%B")
	if engGit(t, engDir, "rev-parse", "HEAD") == head || !strings.HasPrefix(msg, "alice\n") || !strings.Contains(msg, "Mindmount-User: alice") {
		t.Fatalf("alice's append is not eng's commit by her:\n%s\n%s", msg, s.logs)
	}
	waitAs(t, s, bobUID, "cat "+filepath.Join(s.mnt, "bob/shared/eng", engLog), func(out string, err error) bool { return strings.Contains(out, "ALICE-LINE") })
	// A new memory of alice's is one commit of eng's too.
	fresh := filepath.Join(s.mnt, "alice/shared/eng/user_memory/alice-new.md")
	if out, err := as(aliceUID, "bash", "-c", `printf -- '---\ndescription: Alice new\n---\n# Alice new\n\nALICE-NEW.\n' > `+fresh); err != nil {
		t.Fatalf("alice's new memory: %v %s\n%s", err, out, s.logs)
	}
	if got := engGit(t, engDir, "show", "HEAD:user_memory/alice-new.md"); !strings.Contains(got, "ALICE-NEW") {
		t.Fatalf("alice's new memory is not on eng's HEAD: %q\n%s", got, s.logs)
	}

	head = engGit(t, engDir, "rev-parse", "HEAD")
	bob := filepath.Join(s.mnt, "bob/shared/eng", engLog)
	// The mount has extended attributes off (fs/mount: DisableXAttrs):
	// the kernel refuses setxattr before the daemon (EOPNOTSUPP); the
	// daemon's answer would be EROFS.
	if out, err := as(bobUID, sysPython, "-c", "import os; os.setxattr('"+bob+"', 'user.x', b'1')"); err == nil || !strings.Contains(out, "Read-only file system") && !strings.Contains(out, "Operation not supported") {
		t.Errorf("bob's setxattr: %v %s, want EROFS or EOPNOTSUPP", err, out)
	}
	for name, script := range map[string]string{
		"write":    "echo x > " + bob,
		"create":   "echo x > " + filepath.Dir(bob) + "/new.md",
		"mkdir":    "mkdir " + filepath.Dir(bob) + "/sub",
		"rename":   "mv " + bob + " " + filepath.Dir(bob) + "/moved.md",
		"unlink":   "rm -f " + bob,
		"truncate": "truncate -s 0 " + bob,
	} {
		if out, err := as(bobUID, "bash", "-c", script); err == nil || !strings.Contains(out, "Read-only file system") {
			t.Errorf("bob's %s: %v %s, want EROFS", name, err, out)
		}
	}
	if out, err := as(bobUID, "bash", "-c", "echo BOB >> "+bob); err == nil || !strings.Contains(out, "Read-only file system") {
		t.Errorf("bob's append: %v %s, want EROFS", err, out)
	}

	dave := filepath.Join(s.mnt, "dave/shared/eng", engLog)
	waitAs(t, s, daveUID, "cat "+dave, func(out string, err error) bool { return err == nil })
	if out, err := as(daveUID, "bash", "-c", "echo DAVE-LINE >> "+dave); err != nil {
		t.Fatalf("dave's append: %v %s\n%s", err, out, s.logs)
	}
	if got := engGit(t, engDir, "rev-parse", "HEAD"); got != head {
		t.Fatalf("eng's HEAD moved on bob's or dave's change: %s -> %s", head, got)
	}
	if br := engGit(t, engDir, "branch", "--list", "mindmount/proposal/dave/*"); !strings.Contains(br, "mindmount/proposal/dave/1") {
		t.Fatalf("no proposal branch of dave's: %q", br)
	}
	for _, u := range []struct {
		uid int
		id  string
	}{{aliceUID, "alice"}, {daveUID, "dave"}} {
		if out, _ := as(u.uid, "cat", filepath.Join(s.mnt, u.id, "shared/eng", engLog)); strings.Contains(out, "DAVE-LINE") {
			t.Fatalf("%s sees dave's proposal before approval:\n%s", u.id, out)
		}
	}
	reviewServedProposal(t, s, engDir)
	promoteServed(t, s, engDir)
	// carol, no member, is refused by the kernel at the socket (it is
	// the team's group's), and cannot read eng either.
	sock := host.TeamSocket(root, "eng")
	// Through a handle on its folder: CI's ROOT is longer than a
	// socket's address holds.
	connect := fmt.Sprintf("import os, socket; d = os.open(%q, os.O_PATH); print('folder opened', flush=True); s = socket.socket(socket.AF_UNIX); s.connect('/proc/self/fd/%%d/%s' %% d)", filepath.Dir(sock), filepath.Base(sock))
	if out, err := as(carolUID, sysPython, "-c", connect); err == nil || !strings.Contains(out, "folder opened") || !strings.Contains(out, "Permission denied") {
		t.Fatalf("carol connected to eng's writer: %v %s", err, out)
	}
	noEngCanary(t, s, root, engDir)
}

// TestServeTeamLostUpdates: members append to one team memory at the
// same moment through their mounts; every line is on eng's HEAD
// afterwards or in a proposal of its writer's (a conflict), none is
// lost, and git fsck is clean. MINDMOUNT_TEAM_APPENDS=members×each sets
// the size (the full form: 8×125); the default is 4×10.
func TestServeTeamLostUpdates(t *testing.T) {
	requireRootFUSE(t)
	members, each := 4, 10
	if v := os.Getenv("MINDMOUNT_TEAM_APPENDS"); v != "" {
		if _, err := fmt.Sscanf(v, "%dx%d", &members, &each); err != nil || members < 1 || members > 8 {
			t.Fatalf("MINDMOUNT_TEAM_APPENDS=%q: want MEMBERSxEACH, at most 8 members", v)
		}
	}
	root, engDir := serveTeamWriteRoot(t)
	ids := []string{"alice"}
	uids := []int{aliceUID}
	for i := 1; i < members; i++ {
		id, uid := fmt.Sprintf("w%d", i), 2200+i
		runCmd(t, "users", "add", root, id, "--uid", itoa(uid))
		runCmd(t, "teams", "member", root, "eng", id, "--role", "write")
		ids, uids = append(ids, id), append(uids, uid)
	}
	s := startServe(t, root, serveOpts{})
	waitTeamWriter(t, s)
	for i, id := range ids {
		waitAs(t, s, uids[i], "cat "+filepath.Join(s.mnt, id, "shared/eng", engLog), func(_ string, err error) bool { return err == nil })
	}
	start := time.Now()
	var wg sync.WaitGroup
	fails := make([]string, len(ids))
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := filepath.Join(s.mnt, id, "shared/eng", engLog)
			script := fmt.Sprintf(`for n in $(seq 1 %d); do echo "LINE-%s-$n" >> %s || echo "FAILED $n"; done`, each, id, f)
			out, err := as(uids[i], "bash", "-c", script)
			if err != nil || out != "" {
				fails[i] = fmt.Sprintf("%s: %v %s", id, err, out)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d members × %d appends through their mounts in %v", members, each, time.Since(start))
	for _, f := range fails {
		if f != "" {
			t.Errorf("appends failed: %s", f)
		}
	}
	lost := lostLines(t, engDir, ids, each)
	if len(lost) > 0 {
		t.Fatalf("%d lines lost silently, e.g. %v\n%s", len(lost), lost[:min(5, len(lost))], s.logs)
	}
	if out, err := exec.Command("git", "-c", "safe.directory=*", "-C", engDir, "fsck", "--strict").CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// lostLines are the lines written that are neither on eng's HEAD nor in
// any proposal branch.
func lostLines(t *testing.T, engDir string, ids []string, each int) []string {
	t.Helper()
	var all strings.Builder
	all.WriteString(engGit(t, engDir, "show", "HEAD:"+engLog))
	proposals := 0
	for _, br := range strings.Fields(engGit(t, engDir, "for-each-ref", "--format=%(refname:short)", "refs/heads/mindmount/proposal/")) {
		all.WriteString(engGit(t, engDir, "show", br+":"+engLog))
		proposals++
	}
	t.Logf("%d proposals (conflicts)", proposals)
	have := map[string]bool{}
	for _, l := range strings.Split(all.String(), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var lost []string
	for _, id := range ids {
		for n := 1; n <= each; n++ {
			if l := "LINE-" + id + "-" + strconv.Itoa(n); !have[l] {
				lost = append(lost, l)
			}
		}
	}
	return lost
}

// TestServeTeamWriterReload: a team added to a running serve gets its
// writer (its socket answers), and a team removed loses it (its socket
// is gone); eng's writer runs on.
func TestServeTeamWriterReload(t *testing.T) {
	requireRootFUSE(t)
	root, _ := serveTeamWriteRoot(t)
	s := startServe(t, root, serveOpts{})
	waitTeamWriter(t, s)
	runCmd(t, "teams", "add", root, "ops", "--uid", itoa(engUID+1))
	ops := host.TeamClient{Socket: host.TeamSocket(root, "ops")}
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := ops.Put(context.Background(), engLog, "", []byte("x"))
		if errors.Is(err, team.ErrNotMember) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ops's writer does not answer: %v\n%s", err, s.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	runCmd(t, "teams", "remove", root, "ops")
	for {
		if _, err := os.Stat(ops.Socket); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ops's socket stays after its removal\n%s", s.logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitTeamWriter(t, s)
}

// reviewServedProposal: under serve a member reviews through her own
// repository (her worker asks the team's writer): dave (propose) lists
// his proposal but may not approve it; alice (maintain) approves it at
// the tip the list shows, and eng's HEAD then holds dave's line.
func reviewServedProposal(t *testing.T, s *served, engDir string) {
	t.Helper()
	bin := userBinary(t)
	repo := func(id string) string { return filepath.Join(s.root, "users", id) }
	out, err := as(daveUID, "env", "HOME=/nonexistent", bin, "review", "list", "--team", "eng", repo("dave"))
	if err != nil || !strings.Contains(out, "mindmount/proposal/dave/1") {
		t.Fatalf("dave's review list: %v\n%s\n%s", err, out, s.logs)
	}
	f := strings.Fields(out) // BRANCH tip SHA by AUTHOR PATHS
	if len(f) < 3 || f[1] != "tip" {
		t.Fatalf("dave's review list: %q", out)
	}
	tip := f[2]
	if out, err := as(daveUID, "env", "HOME=/nonexistent", bin, "review", "approve", "--team", "eng", "--tip", tip, repo("dave"), "mindmount/proposal/dave/1"); err == nil || !strings.Contains(out, "maintain") {
		t.Fatalf("dave approved his own proposal: %v\n%s", err, out)
	}
	if out, err := as(aliceUID, "env", "HOME=/nonexistent", bin, "review", "approve", "--team", "eng", "--tip", tip, repo("alice"), "mindmount/proposal/dave/1"); err != nil || !strings.Contains(out, "approved") {
		t.Fatalf("alice's approval: %v\n%s\n%s", err, out, s.logs)
	}
	if got := engGit(t, engDir, "show", "HEAD:"+engLog); !strings.Contains(got, "DAVE-LINE") {
		t.Fatalf("approved, eng's HEAD holds:\n%s", got)
	}
	if br := engGit(t, engDir, "branch", "--list", "mindmount/proposal/dave/*"); br != "" {
		t.Fatalf("the approved branch stays: %q", br)
	}
}

// promoteServed: under serve, "mindmount promote" on a member's own
// repository asks her worker: alice (maintain) promotes a committed
// memory of hers, which lands on eng's HEAD with promoted_from and
// without its access log; a second promotion to the same path is
// refused; dave (propose) promotes his as a proposal branch; bob (read)
// is refused and eng's HEAD does not move.
func promoteServed(t *testing.T, s *served, engDir string) {
	t.Helper()
	bin := userBinary(t)
	rel := "user_memory/promo.md"
	memory := "---\ndescription: Promo fact\n---\n# Promo fact\n\n## Fact\nPROMO-CANARY.\n\n## Access log\n- used, 01.02.26\n"
	for _, u := range []struct {
		uid int
		id  string
	}{{aliceUID, "alice"}, {daveUID, "dave"}, {bobUID, "bob"}} {
		if err := os.WriteFile(filepath.Join(s.mnt, u.id, rel), []byte(strings.Replace(memory, "PROMO", "PROMO-"+u.id, 1)), 0o644); err != nil {
			t.Fatalf("%s's memory: %v", u.id, err)
		}
		s.waitCommit(t, u.id, rel, "PROMO-"+u.id)
	}
	promote := func(uid int, id string) (string, error) {
		return as(uid, "env", "HOME=/nonexistent", bin, "promote", filepath.Join(s.root, "users", id), rel, "--team", "eng")
	}
	if out, err := promote(aliceUID, "alice"); err != nil || !strings.Contains(out, "promoted") {
		t.Fatalf("alice's promotion: %v\n%s\n%s", err, out, s.logs)
	}
	got := engGit(t, engDir, "show", "HEAD:"+rel)
	if !strings.Contains(got, "PROMO-alice-CANARY") || !strings.Contains(got, "promoted_from: alice:") || strings.Contains(got, "used, 01.02.26") {
		t.Fatalf("the promoted memory on eng's HEAD:\n%s", got)
	}
	head := engGit(t, engDir, "rev-parse", "HEAD")
	if out, err := promote(aliceUID, "alice"); err == nil || !strings.Contains(out, "already has") {
		t.Fatalf("a second promotion to the same path: %v\n%s", err, out)
	}
	if out, err := promote(bobUID, "bob"); err == nil || !strings.Contains(out, "read") {
		t.Fatalf("bob's promotion: %v\n%s", err, out)
	}
	if now := engGit(t, engDir, "rev-parse", "HEAD"); now != head {
		t.Fatalf("a refused promotion moved eng's HEAD %s -> %s", head, now)
	}
	os.Remove(filepath.Join(s.mnt, "alice/shared/eng", rel)) // forwarded: the path is free again
	waitAs(t, s, daveUID, "cat "+filepath.Join(s.mnt, "dave/shared/eng", rel), func(_ string, err error) bool { return err != nil })
	head = engGit(t, engDir, "rev-parse", "HEAD")
	if out, err := promote(daveUID, "dave"); err != nil || !strings.Contains(out, "proposal mindmount/proposal/dave/") {
		t.Fatalf("dave's promotion: %v\n%s\n%s", err, out, s.logs)
	}
	if now := engGit(t, engDir, "rev-parse", "HEAD"); now != head {
		t.Fatalf("a proposer's promotion moved eng's HEAD %s -> %s", head, now)
	}
}
