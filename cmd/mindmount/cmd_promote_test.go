package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPromote: a committed personal memory lands in the team repository
// as one commit, with promoted_from and without its access log; the
// personal repository is untouched; promoting it again, promoting a
// memory holding a secret, or an uncommitted one, is refused and the
// team's HEAD does not move.
func TestPromote(t *testing.T) {
	secret := plantedGitHub // shaped like a token, not one
	personal := mgRepo(t, map[string]string{
		"user.md":                      "# User\n",
		"user_memory/deploy-freeze.md": recallTestMemory("Deploy Freeze", "No deploys on Fridays", "The team never deploys on Fridays.", "active") + "used, 01.01.26\nused, 02.01.26\n",
		"user_memory/cloud-key.md":     recallTestMemory("Cloud Key", "The cloud key", "The key: "+secret, "active"),
	})
	team := mgRepo(t, map[string]string{"user.md": "# Team\n"})
	head := func(dir string) string {
		out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	personalHead, teamHead := head(personal), head(team)
	out, errs, code := runMindmount(t, "promote", personal, "user_memory/deploy-freeze.md", "--team", "eng", "--team-dir", team, "--user", "alice")
	if code != 0 || !strings.Contains(out, "promoted user_memory/deploy-freeze.md to team eng") {
		t.Fatalf("promote: exit %d\n%s%s", code, out, errs)
	}
	show, err := exec.Command("git", "-C", team, "show", "HEAD:user_memory/deploy-freeze.md").Output()
	if err != nil {
		t.Fatalf("not committed in the team: %v", err)
	}
	if !strings.Contains(string(show), "promoted_from: alice:"+personalHead+":user_memory/deploy-freeze.md\n") || strings.Contains(string(show), "used, ") {
		t.Errorf("promoted memory:\n%s", show)
	}
	if b, _ := os.ReadFile(filepath.Join(team, "user_memory", "deploy-freeze.md")); string(b) != string(show) {
		t.Error("the team's work tree does not hold the commit's file")
	}
	if head(personal) != personalHead {
		t.Error("the personal repository moved")
	}
	teamHead = head(team)
	for name, c := range map[string]struct {
		path, want string
	}{
		"again":       {"user_memory/deploy-freeze.md", "already has"},
		"secret":      {"user_memory/cloud-key.md", "secret"},
		"uncommitted": {"user_memory/nothing.md", "not committed"},
		"outside":     {"../x.md", "not a memory file"},
	} {
		_, errs, code := runMindmount(t, "promote", personal, c.path, "--team", "eng", "--team-dir", team, "--user", "alice")
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, %q; want a refusal saying %q", name, code, errs, c.want)
		}
		if strings.Contains(errs, secret) {
			t.Errorf("%s: the refusal shows the secret: %s", name, errs)
		}
		if head(team) != teamHead {
			t.Errorf("%s: the team's HEAD moved", name)
		}
	}
	if _, errs, code := runMindmount(t, "promote", personal, "user_memory/deploy-freeze.md", "--team", "ops"); code == 0 || !strings.Contains(errs, "no such scope") {
		t.Errorf("promote to a team not attached: exit %d %s", code, errs)
	}
}
