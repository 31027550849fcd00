package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitPreCommitRefusesSecret: the hook "mindmount init" installs runs
// the built binary's secret scan: a token staged in a file that is no
// memory, and one in a file name, are refused by the real git CLI with the
// file, line and rule, never the value.
func TestInitPreCommitRefusesSecret(t *testing.T) {
	requireGitCLI(t)
	bin := mindmountBinary(t)
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	token := "ghp_" + "x9Kd83hQpLm2Vb7Ns4Wt6Yr1Zc5Fg0Jh8Ea3"
	for i, c := range []struct{ rel, data, want string }{
		{"notes/deploy.txt", "steps\nexport GITHUB_TOKEN=" + token + "\n", "notes/deploy.txt:2: secret found (rule "},
		{"notes/" + token + ".txt", "nothing here\n", "notes/[REDACTED:"},
	} {
		p := filepath.Join(dir, filepath.FromSlash(c.rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(c.data), 0o644); err != nil {
			t.Fatal(err)
		}
		gitOut(t, dir, "add", "--", c.rel)
		cmd := exec.Command("git", "commit", "-q", "-m", "notes")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "(rule ") {
			t.Errorf("case %d: not refused with file, line and rule (err %v):\n%s", i, err, out)
		}
		if strings.Contains(string(out), token) {
			t.Errorf("case %d: the refusal shows the token", i)
		}
		gitOut(t, dir, "rm", "-q", "--cached", "--", c.rel)
		os.Remove(p)
	}
}
