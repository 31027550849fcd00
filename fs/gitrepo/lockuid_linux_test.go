package gitrepo

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lockHelper names the git directory the re-executed test locks, as the
// uid it was started with.
const lockHelper = "MINDMOUNT_LOCK_HELPER"

// TestLockHelper is not a test of its own: TestLockFileOfAnotherUID runs
// it as another uid.
func TestLockHelper(t *testing.T) {
	gitDir := os.Getenv(lockHelper)
	if gitDir == "" {
		t.Skip("run by TestLockFileOfAnotherUID")
	}
	unlock, err := (&Repo{dir: filepath.Dir(gitDir), gitDir: gitDir}).LockAlone()
	if err != nil {
		fmt.Printf("refused: %v\n", err)
		return
	}
	unlock()
	fmt.Println("locked")
}

// TestLockFileOfAnotherUID: a daemon lock file root made in a user's
// repository (0644, root's) still locks for the user: the lock opens it
// for reading when it may not write it, and an flock needs no more.
func TestLockFileOfAnotherUID(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run as another uid")
	}
	const uid = 54321
	dir, err := os.MkdirTemp("/tmp", "lockuid") // reachable by the uid, whatever TMPDIR is
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "gitrepo.test")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(dir, "repo", ".git")
	if err := os.MkdirAll(gitDir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(gitDir, 0o777) // the user may make files here, as in its own repository
	os.Chmod(filepath.Dir(gitDir), 0o755)
	unlock, err := (&Repo{dir: filepath.Dir(gitDir), gitDir: gitDir}).LockDaemon()
	if err != nil {
		t.Fatal(err)
	}
	unlock() // the lock file stays: root's, 0644
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestLockHelper$")
	cmd.Dir = dir
	cmd.Env = []string{lockHelper + "=" + gitDir, "HOME=/nonexistent"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "locked") {
		t.Fatalf("as uid %d, root's lock file: %v\n%s", uid, err, out)
	}
}
