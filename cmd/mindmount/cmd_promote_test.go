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

// TestPromoteByRole: a proposer's promotion into a joined team is a
// proposal branch (the team's HEAD and work tree do not move); a
// reader's is refused.
func TestPromoteByRole(t *testing.T) {
	personal := mgRepo(t, map[string]string{
		"user.md":                      "# User\n",
		"user_memory/deploy-freeze.md": recallTestMemory("Deploy Freeze", "No deploys on Fridays", "The team never deploys on Fridays.", "active"),
	})
	team := mgRepo(t, map[string]string{"user.md": "# Team\n"})
	role := "propose"
	saved := teamsOf
	t.Cleanup(func() { teamsOf = saved })
	teamsOf = func(string) ([]teamDir, error) { return []teamDir{{Name: "eng", Dir: team, Role: role}}, nil }
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", team}, args...)...).Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	head := git("rev-parse", "HEAD")
	out, errs, code := runMindmount(t, "promote", personal, "user_memory/deploy-freeze.md", "--team", "eng", "--user", "pete")
	if code != 0 || !strings.Contains(out, "proposal mindmount/proposal/pete/1") {
		t.Fatalf("a proposer's promotion: exit %d\n%s%s", code, out, errs)
	}
	if git("rev-parse", "HEAD") != head {
		t.Fatal("a proposer's promotion moved the team's HEAD")
	}
	if _, err := os.Stat(filepath.Join(team, "user_memory/deploy-freeze.md")); err == nil {
		t.Fatal("a proposer's promotion is in the team's work tree")
	}
	if show := git("show", "mindmount/proposal/pete/1:user_memory/deploy-freeze.md"); !strings.Contains(show, "promoted_from: pete:") {
		t.Fatalf("the proposal holds:\n%s", show)
	}
	role = "read"
	if _, errs, code := runMindmount(t, "promote", personal, "user_memory/deploy-freeze.md", "--team", "eng", "--user", "pete"); code == 0 || !strings.Contains(errs, "read") {
		t.Fatalf("a reader's promotion: exit %d %s", code, errs)
	}
}
