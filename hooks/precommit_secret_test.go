package hooks

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Values assembled at run time, so no scanner of this source flags them.
var (
	hookGitHubToken = "ghp_" + "x9Kd83hQpLm2Vb7Ns4Wt6Yr1Zc5Fg0Jh8Ea3"
	hookAWSKey      = "AKIA" + "GXBENYJQWX6HH756"
	hookStripeKey   = "sk_live_" + "u8jzPde0IgxLd6GncfBAepfJ"
)

// TestPreCommitRefusesSecrets stages secrets through the real git CLI
// with the hook installed — in a memory's content, in a file name, in a
// binary file, in a file over 4 MiB and in a file that is no memory — and
// sees each commit refused with the file, the line and the rule, never the
// value. The commit goes through once the file is gone.
func TestPreCommitRefusesSecrets(t *testing.T) {
	mindmountOnPath(t)
	dir := clone(t)
	filler := strings.Repeat("You mentioned a bag of Ethiopian coffee from a local roaster.\n", (5<<20)/62)
	png := append([]byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d}, []byte("tEXtComment\x00"+hookGitHubToken+"\x00\x00\xff\xfe")...)
	cases := []struct {
		name, rel string
		data      []byte
		value     string
		where     string // what the refusal starts with: "path:line: "
		rule      string
	}{
		{"memory content", "user_memory/bank.md", []byte("---\ndescription: Bank details\n---\n# Bank\n\n## Fact\nDeploy with " + hookAWSKey + " today.\n"), hookAWSKey, "user_memory/bank.md:7: ", "aws-access-token"},
		{"file name", "attachments/" + hookGitHubToken + ".txt", []byte("nothing to see\n"), hookGitHubToken, "attachments/[REDACTED:", "github-pat"},
		{"binary file", "attachments/photo.png", png, hookGitHubToken, "attachments/photo.png:3: ", "github-pat"},
		{"file over 4 MiB", "notes/big.log", []byte(filler + "shop key " + hookStripeKey + "\n"), hookStripeKey, "notes/big.log:" + strconv.Itoa(strings.Count(filler, "\n")+1) + ": ", "stripe-access-token"},
		{"not a memory", "notes/todo.txt", []byte("call the bank\npassword: Hunter2x9\n"), "Hunter2x9", "notes/todo.txt:2: ", "mindmount-password"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, filepath.FromSlash(c.rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			mustGit(t, dir, "add", "--", c.rel)
			out, err := runGit(t, dir, "commit", "-q", "-m", "add "+c.name)
			if err == nil {
				t.Fatalf("committed:\n%s", out)
			}
			if !strings.Contains(out, c.where) || !strings.Contains(out, "rule "+c.rule) {
				t.Errorf("refusal lacks %q and rule %s:\n%s", c.where, c.rule, out)
			}
			if strings.Contains(out, c.value) {
				t.Errorf("refusal shows the value:\n%s", out)
			}
			if head := mustGit(t, dir, "ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(head, filepath.Base(c.rel)) {
				t.Errorf("reached HEAD anyway:\n%s", head)
			}
			mustGit(t, dir, "rm", "-q", "--cached", "--", c.rel)
			os.Remove(p)
			// Without the secret the same commit goes through.
			if out, err := runGit(t, dir, "commit", "-q", "--allow-empty", "-m", "clean"); err != nil {
				t.Fatalf("clean commit refused: %v\n%s", err, out)
			}
		})
	}
}
