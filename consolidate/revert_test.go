package consolidate

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestRevertTheWayTheDocsSay: a consolidation reverts with the command
// docs/mount.md gives ("git revert --no-edit -m 1 HEAD"), run by the real
// git CLI from an empty HOME whose only identity is the GIT_CONFIG_*
// one; a plain "git revert HEAD" is refused (the consolidation is a
// merge), which is why the docs give -m 1. The merge's subject is not the
// dream commit's: "git log --oneline" tells them apart.
func TestRevertTheWayTheDocsSay(t *testing.T) {
	e := newEnv(t, "ollama", nil)
	e.addTranscript("transcripts/s.jsonl", jsonl("I keep two beehives."))
	e.script([]Fact{{Kind: "user", Slug: "keeps-bees", Description: "Keeps bees", Fact: "You keep two beehives."}}, []Decision{{Fact: 0, Action: ActionAdd}})
	if rep := e.run(); len(rep.Merges) != 1 || !e.exists("user_memory/keeps-bees.md") {
		t.Fatalf("report %+v", rep)
	}
	subjects := strings.Split(strings.TrimSpace(e.git("log", "--format=%s")), "\n")
	for i := 1; i < len(subjects); i++ {
		if subjects[i] == subjects[i-1] {
			t.Fatalf("two commits in a row say %q:\n%s", subjects[i], strings.Join(subjects, "\n"))
		}
	}
	revert := func(args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-C", e.dir, "revert", "--no-edit"}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=Ada",
			"GIT_CONFIG_KEY_1=user.email", "GIT_CONFIG_VALUE_1=ada@example.com"}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := revert("HEAD"); err == nil || !strings.Contains(out, "-m") {
		t.Fatalf("a plain git revert HEAD of a consolidation: %v\n%s", err, out)
	}
	if out, err := revert("-m", "1", "HEAD"); err != nil {
		t.Fatalf("git revert -m 1 HEAD: %v\n%s", err, out)
	}
	if e.exists("user_memory/keeps-bees.md") {
		t.Fatal("the revert left the consolidation's memory")
	}
	e.checkGit()
}
