package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/serve/host"
)

// Every command that takes a repository refuses a plain folder and a plain
// git repository with the same one line (issue 11.6). mindmount serve takes a
// serve root, not a repository, and mindmount hook says the same line but
// exits 0 (a hook never fails the agent), so neither is in the list; nor is
// mindmount hooks install, whose git hooks serve any clone, even an empty one.
func TestCommandsRefuseNonRepositories(t *testing.T) {
	plain := mgFolder(t, map[string]string{"notes.md": "# hi\n"})
	gitOnly := mgFolder(t, map[string]string{"notes.md": "# hi\n"})
	if out, err := exec.Command("git", "-C", gitOnly, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	mnt := t.TempDir()
	wants := map[string]string{
		plain:   plain + " is not a mindmount repository: it holds other files and no memory; name the repository's folder, or make a new one with mindmount init NEWDIR",
		gitOnly: gitOnly + " is not a mindmount repository: it is a git repository without character.md or user.md; add mindmount's files with mindmount init " + gitOnly,
	}
	for _, dir := range []string{plain, gitOnly} {
		want := wants[dir]
		for _, args := range [][]string{
			{"check", dir}, {"index", dir}, {"context", dir}, {"recall", dir, "tea"},
			{"reindex", dir}, {"consolidate", dir}, {"status", dir},
			{"mount", dir, mnt}, {"watch", dir}, {"mcp", dir},
			{"run", "--repo", dir, "--", "true"},
			{"sync", dir}, {"remote", "show", dir},
		} {
			_, errs, code := mgRun(args...)
			if line := "mindmount " + args[0] + ": " + want; code != 1 || strings.TrimSpace(errs) != line {
				t.Errorf("%q: exit %d, stderr\n%s\nwant exit 1 and\n%s", args, code, errs, line)
			}
		}
	}
}

// "check DIR/user_memory" and "check FILE" report exactly what a check of the
// whole repository reports for those files.
func TestCheckPathInsideRepository(t *testing.T) {
	files := map[string]string{}
	for k, v := range mgFiles {
		files[k] = v
	}
	files["user_memory/bad.md"] = "---\ndescription: x\ncolour: red\n---\n"
	files["docs/bad.md"] = "---\ncolour: red\n---\n"
	dir := mgRepo(t, files)

	whole, _, _ := mgRun("check", dir)
	var wantUser []string
	for _, l := range strings.Split(strings.TrimSpace(whole), "\n") {
		if strings.HasPrefix(l, "user_memory/") {
			wantUser = append(wantUser, l)
		}
	}
	if len(wantUser) == 0 {
		t.Fatalf("whole-repository check found nothing under user_memory/:\n%s", whole)
	}
	sub, _, code := mgRun("check", filepath.Join(dir, "user_memory"))
	if code != 1 || strings.TrimSpace(sub) != strings.Join(wantUser, "\n") {
		t.Errorf("check user_memory: exit %d\n%s\nwant\n%s", code, sub, strings.Join(wantUser, "\n"))
	}
	one, _, code := mgRun("check", filepath.Join(dir, "user_memory", "bad.md"))
	if code != 1 || strings.TrimSpace(one) != strings.Join(wantUser, "\n") {
		t.Errorf("check FILE: exit %d\n%s", code, one)
	}
	good, _, code := mgRun("check", filepath.Join(dir, "user_memory", "tea.md"))
	if code != 0 || !strings.Contains(good, "1 file checked, all valid") {
		t.Errorf("check valid FILE: exit %d\n%s", code, good)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := mgRun("check", filepath.Join(dir, "notes.txt")); code == 0 || !strings.Contains(errs, "not a memory file") {
		t.Errorf("check of a non-memory file: exit %d, %q", code, errs)
	}
}

// planted is a repository that another uid owns, whose git configuration
// names a program for git to run (core.fsmonitor for any status, and
// gpg.program with log.showSignature for a log of its HEAD, a signed
// consolidation commit). The program appends its uid to marker.
type planted struct {
	dir    string // the repository
	marker string // appears when the program ran
}

// plantGitPrograms plants the programs in dir (owned by uid) and checks,
// as uid, that plain git does run them, so the plant is real; the marker
// is then removed.
func plantGitPrograms(t *testing.T, dir string, uid int) planted {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the repository belongs to another uid")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux) to act as another uid")
	}
	tools := t.TempDir()
	reachable(tools)
	os.Chmod(tools, 0o1777)
	marker := filepath.Join(tools, "ran")
	prog := filepath.Join(tools, "pwn.sh")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nid -u >> "+marker+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	who := consolidate.Author.Name + " <" + consolidate.Author.Email + "> 1700000000 +0000"
	script := `set -e
export HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1
cd "$1"
tree=$(git rev-parse 'HEAD^{tree}'); parent=$(git rev-parse HEAD)
c=$(printf 'tree %s\nparent %s\nauthor %s\ncommitter %s\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nconsolidate: planted\n' "$tree" "$parent" "$3" "$3" | git hash-object -t commit -w --stdin)
git update-ref HEAD "$c"
git config core.fsmonitor "$2"
git config log.showSignature true
git config gpg.program "$2"
git log -1 --format=%h >/dev/null 2>&1 || true
git status --porcelain >/dev/null 2>&1 || true
`
	if out, err := as(uid, "sh", "-c", script, "sh", dir, prog, who); err != nil {
		t.Fatalf("plant: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(marker)
	if got := strings.Fields(string(b)); len(got) < 2 || got[0] != itoa(uid) {
		t.Fatalf("plain git as uid %d did not run the planted program twice (log, status): marker %q", uid, b)
	}
	os.Remove(marker)
	return planted{dir: dir, marker: marker}
}

// ranAs fails the test when the planted program ran.
func (p planted) ranAs(t *testing.T, what string) {
	t.Helper()
	if b, err := os.ReadFile(p.marker); err == nil {
		t.Errorf("%s ran the repository's planted program, as uid %s", what, strings.Join(strings.Fields(string(b)), ", "))
	}
}

// rootOwned lists the files under dir that root owns.
func rootOwned(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid == 0 {
				out = append(out, p)
			}
		}
		return nil
	})
	return out
}

// runBinary runs the built mindmount with args, as root, HOME unreadable
// to others as a root shell's is; it returns the combined output and the
// exit status.
func runBinary(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mindmountBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("mindmount %s: %v", strings.Join(args, " "), err)
	}
	return string(out), code
}

// TestForeignOwner: root's commands take the rights of the one user who
// owns what they are given; two users between them are refused; root's
// own files need nobody.
func TestForeignOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give files to other uids")
	}
	mine := t.TempDir()
	alice, bob := t.TempDir(), t.TempDir()
	os.Chown(alice, aliceUID, aliceUID)
	os.Chown(bob, bobUID, bobUID)
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(bob, link)
	os.Lchown(link, aliceUID, aliceUID)
	for _, c := range []struct {
		name    string
		paths   []string
		foreign bool
		uid     uint32
		err     error
	}{
		{"root's own", []string{mine}, false, 0, nil},
		{"a folder not made yet in root's", []string{filepath.Join(mine, "new", "repo")}, false, 0, nil},
		{"alice's", []string{alice}, true, aliceUID, nil},
		{"a folder not made yet in alice's", []string{filepath.Join(alice, "new")}, true, aliceUID, nil},
		{"alice's and root's", []string{alice, mine}, true, aliceUID, nil},
		{"alice's and bob's", []string{alice, bob}, false, 0, host.ErrOwners},
		{"alice's link to bob's", []string{link}, false, 0, host.ErrOwners},
	} {
		o, foreign, err := host.ForeignOwner(c.paths...)
		if !errors.Is(err, c.err) || foreign != c.foreign || o.UID != c.uid {
			t.Errorf("%s: %v %v %v, want uid %d, foreign %v, err %v", c.name, o, foreign, err, c.uid, c.foreign, c.err)
		}
	}
}
