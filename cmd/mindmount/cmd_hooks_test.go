package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// personUID is the uid of the person whose project root installs into.
const personUID = 54321

// personDir is a folder owned by personUID that personUID can reach (its
// parents open to all, as a home folder's are).
func personDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to act for another uid")
	}
	dir, err := os.MkdirTemp("", "project")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, personUID, personUID); err != nil {
		t.Fatal(err)
	}
	reachable(filepath.Dir(dir)) // the tests' temporary folders are 0700
	return dir
}

// TestHooksInstallProjectAsRoot: root installing the harness hooks into a
// person's project (--scope project) leaves nothing there that root owns:
// the settings files, their folders and the skill links are the person's,
// who can then change them (checked as that uid with setpriv); uninstall
// leaves nothing of root's either.
func TestHooksInstallProjectAsRoot(t *testing.T) {
	project := personDir(t)
	mem := mgRepo(t, map[string]string{
		"user.md":                "You talk to Ada.\n",
		"skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploy the app.\n---\n# Deploy\n",
	})
	t.Setenv("HOME", t.TempDir())
	t.Chdir(project)
	out, errOut, code := mgRun("hooks", "install", "--harness", "claude-code", "--scope", "project", mem)
	if code != 0 {
		t.Fatalf("install (exit %d):\n%s%s", code, out, errOut)
	}
	settings := filepath.Join(project, ".claude", "settings.local.json")
	if _, err := os.Stat(settings); err != nil {
		t.Fatalf("no project settings: %v\n%s", err, out)
	}
	if own := rootOwned(t, project); len(own) > 0 {
		t.Fatalf("root owns in the person's project: %v", own)
	}
	if _, err := exec.LookPath("setpriv"); err == nil {
		id := strconv.Itoa(personUID)
		cmd := exec.Command("setpriv", "--reuid", id, "--regid", id, "--clear-groups", "sh", "-c", `echo "{}" > "$1" && touch "$(dirname "$1")/mine"`, "sh", settings)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the person cannot change the settings: %v\n%s", err, b)
		}
	}
	conformanceWrite(t, settings)
	out, errOut, code = mgRun("hooks", "uninstall", "--harness", "claude-code", "--scope", "project", mem)
	if code != 0 {
		t.Fatalf("uninstall (exit %d):\n%s%s", code, out, errOut)
	}
	if own := rootOwned(t, project); len(own) > 0 {
		t.Fatalf("root owns in the person's project after uninstall: %v", own)
	}
}

// conformanceWrite puts back a settings file with an entry of the
// person's own, which uninstall must keep (and rewrite, as root).
func conformanceWrite(t *testing.T, settings string) {
	t.Helper()
	if err := os.WriteFile(settings, []byte(`{"theme": "dark"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(settings, personUID, personUID); err != nil {
		t.Fatal(err)
	}
}

// TestHandOverFollowsNoLink: a symbolic link the person planted on the
// way to a file install names is not followed: the file it leads to,
// root's, stays root's; a path outside the project is never touched; and
// in a project root owns nothing is handed over.
func TestHandOverFollowsNoLink(t *testing.T) {
	project := personDir(t)
	outside := t.TempDir() // another person's folder, with a file of root's
	secret := filepath.Join(outside, "settings.json")
	if err := os.WriteFile(secret, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(outside, personUID+1, personUID+1); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(project, ".claude")); err != nil {
		t.Fatal(err)
	}
	if err := handOver(project, []string{filepath.Join(project, ".claude", "settings.json"), "/etc/passwd"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{secret, "/etc/passwd"} {
		if fi, err := os.Lstat(p); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 0 {
			t.Fatalf("%s was handed over through a link or from outside the project", p)
		}
	}
	if fi, _ := os.Lstat(filepath.Join(project, ".claude")); fi.Sys().(*syscall.Stat_t).Uid != personUID {
		t.Error("the link itself, root's, in the person's project, was not handed over")
	}
	rootProject := t.TempDir()
	mine := filepath.Join(rootProject, ".mcp.json")
	if err := os.WriteFile(mine, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := handOver(rootProject, []string{mine}); err != nil {
		t.Fatal(err)
	}
	if own := rootOwned(t, rootProject); len(own) != 2 {
		t.Errorf("in root's own project root owns %v; want all of it", own)
	}
}
