package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/serve/host"
)

// TestSyncAsRootUsesTheOwnersHome: root syncing another user's repository
// runs as that user with that user's HOME, not root's: a re-executed sync
// that looked for its default credentials under root's 0700 home failed
// with "permission denied" and recorded a sync failure in the user's state.
func TestSyncAsRootUsesTheOwnersHome(t *testing.T) {
	root := serveRoot(t)
	dir := host.UserDir(root, "alice")
	if os.Geteuid() != 0 {
		t.Skip("needs root: the repository belongs to another uid")
	}
	shared := t.TempDir()
	reachable(shared)
	os.Chmod(shared, 0o1777)
	bare := filepath.Join(shared, "remote.git")
	for _, args := range [][]string{{"git", "init", "-q", "--bare", bare}, {"git", "-C", dir, "remote", "add", "origin", bare}} {
		if out, err := as(aliceUID, append([]string{"env", "HOME=/nonexistent"}, args...)...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	rootHome := t.TempDir()
	os.Chmod(rootHome, 0o700)
	out, code := runBinary(t, []string{"HOME=" + rootHome, "MINDMOUNT_CREDENTIALS="}, "sync", dir)
	if code != 0 || strings.Contains(out, "permission denied") {
		t.Fatalf("sync as root of alice's repository: exit %d\n%s", code, out)
	}
	head, err := as(aliceUID, "env", "HOME=/nonexistent", "git", "-C", dir, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	pushed, err := as(aliceUID, "env", "HOME=/nonexistent", "git", "-C", bare, "rev-parse", "main")
	if err != nil || strings.TrimSpace(string(pushed)) != strings.TrimSpace(string(head)) {
		t.Errorf("the remote's main is %q (%v), alice's HEAD %q", pushed, err, head)
	}
}

// TestCheckAsRootSeesUntrackedSecrets: root checking another user's
// repository checks as that user, so an untracked file holding a secret
// is reported, as it is to the user, never "all valid".
func TestCheckAsRootSeesUntrackedSecrets(t *testing.T) {
	root := serveRoot(t)
	dir := host.UserDir(root, "alice")
	if os.Geteuid() != 0 {
		t.Skip("needs root: the repository belongs to another uid")
	}
	if out, err := as(aliceUID, "sh", "-c", `printf 'token %s\n' "$2" > "$1/notes.txt"`, "sh", dir, plantedGitHub); err != nil {
		t.Fatalf("plant: %v\n%s", err, out)
	}
	out, code := runBinary(t, []string{"HOME=/nonexistent"}, "check", dir)
	if code != 1 || !strings.Contains(out, "notes.txt:1") {
		t.Errorf("check as root: exit %d, want the untracked secret reported\n%s", code, out)
	}
	if strings.Contains(out, plantedGitHub) {
		t.Errorf("check printed the secret's value:\n%s", out)
	}
}
