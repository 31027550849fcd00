package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Planted secrets, split so no scanner of this repository flags the test.
var (
	plantedAWS    = "AKIA" + "GXBENYJQWX6HH756"
	plantedGitHub = "ghp_" + "x9Kd83hQpLm2Vb7Ns4Wt6Yr1Zc5Fg0Jh8Ea3"
	plantedStripe = "sk_live_" + "u8jzPde0IgxLd6GncfBAepfJ"
	plantedPEM    = "-----BEGIN " + "PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n-----END PRIVATE KEY-----"
)

// TestOneJudgeForEveryDoor (issue 23, item 4): in a clone with the hooks
// installed, a plain "git commit" of a memory holding AWS, GitHub, Stripe
// and PEM secrets — and of an attachment with one, and of a file named by
// a token — is refused with the daemon's message (file, line, rule, never
// the value), and "mindmount check" reports the same; nothing reaches git.
func TestOneJudgeForEveryDoor(t *testing.T) {
	requireGitCLI(t)
	bin := mindmountBinary(t)
	t.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	origin := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", origin)
	clone := filepath.Join(t.TempDir(), "clone")
	gitOut(t, filepath.Dir(clone), "clone", "-q", origin, clone)
	runCmd(t, "hooks", "install", clone)

	mem := "---\ndescription: Shop setup\n---\n# Shop setup\n\n## Fact\nAWS " + plantedAWS + ", GitHub " + plantedGitHub +
		",\nStripe " + plantedStripe + ".\n\n## Episode\nThe deploy key:\n" + plantedPEM + "\n"
	os.WriteFile(filepath.Join(clone, "user_memory", "shop-setup.md"), []byte(mem), 0o644)
	os.MkdirAll(filepath.Join(clone, "attachments"), 0o755)
	os.WriteFile(filepath.Join(clone, "attachments", "dump.bin"), []byte("\x00\x01key "+plantedStripe+"\x00"), 0o644)
	os.WriteFile(filepath.Join(clone, "attachments", plantedGitHub+".txt"), []byte("harmless\n"), 0o644)
	before := gitOut(t, clone, "rev-parse", "HEAD")
	gitOut(t, clone, "add", "-A")
	cmd := exec.Command("git", "commit", "-q", "-m", "keys")
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("git commit of secrets succeeded:\n%s", out)
	}
	checkOut, _, code := runMindmount(t, "check", clone)
	if code != 1 {
		t.Errorf("check exit %d:\n%s", code, checkOut)
	}
	for _, want := range []string{
		"user_memory/shop-setup.md:7: secret found (rule ",
		"user_memory/shop-setup.md:8: secret found (rule ",
		"user_memory/shop-setup.md:12: secret found (rule ",
		"attachments/dump.bin:1: secret found (rule ",
		"attachments/[REDACTED:",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("git commit output lacks %q:\n%s", want, out)
		}
		if !strings.Contains(checkOut, want) {
			t.Errorf("mindmount check output lacks %q:\n%s", want, checkOut)
		}
	}
	for _, v := range []string{plantedAWS, plantedGitHub, plantedStripe, "MIIEvQIBADAN"} {
		if strings.Contains(string(out), v) || strings.Contains(checkOut, v) {
			t.Errorf("a message shows the value %s…", v[:8])
		}
	}
	if gitOut(t, clone, "rev-parse", "HEAD") != before {
		t.Fatal("a commit was made")
	}
	// git add stored the blobs (plain git, before any hook), but no commit
	// reaches them.
	if hist := gitOut(t, clone, "log", "--all", "-p", "--name-only", "--format=%B"); strings.Contains(hist, plantedStripe) || strings.Contains(hist, plantedGitHub) {
		t.Fatal("the history holds a planted secret")
	}
	// The same commit passes once the operator says so in the clone's own
	// local configuration.
	os.MkdirAll(filepath.Join(clone, ".git", "mindmount"), 0o700)
	os.WriteFile(filepath.Join(clone, ".git", "mindmount", "config"), []byte("commit_secrets: true\n"), 0o600)
	cmd = exec.Command("git", "commit", "-q", "-m", "keys")
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("commit with the operator's commit_secrets: %v\n%s", err, out)
	}
}

// TestCommandsServeCommitted (issue 23, item 6): context, index and recall
// — what the harness hooks put in front of a model — print the committed
// version of a memory whose edit adds a secret, and leave out a new one.
func TestCommandsServeCommitted(t *testing.T) {
	requireGitCLI(t)
	dir := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", dir)
	write := func(rel, desc, fact string) {
		os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte("---\ndescription: "+desc+"\n---\n# T\n\n## Fact\n"+fact+"\n"), 0o644)
	}
	write("user_memory/shop-setup.md", "Runs an online tea shop", "You run an online tea shop.")
	gitOut(t, dir, "add", "-A")
	gitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--no-verify", "-m", "shop")
	write("user_memory/shop-setup.md", "Runs an online tea shop, key "+plantedStripe, "Your shop key is "+plantedStripe+".")
	write("user_memory/aws-setup.md", "AWS account of the shop", "The access key is "+plantedAWS+".")
	outs := []string{
		runCmd(t, "context", dir),
		runCmd(t, "index", dir),
	}
	o, _, _ := runMindmount(t, "recall", dir, "shop key access")
	outs = append(outs, o)
	for i, out := range outs {
		if strings.Contains(out, plantedStripe) || strings.Contains(out, plantedAWS) || strings.Contains(out, "aws-setup") {
			t.Errorf("output %d shows a held-back version:\n%s", i, out)
		}
	}
	if !strings.Contains(outs[0], "Runs an online tea shop") {
		t.Errorf("context lacks the committed version:\n%s", outs[0])
	}
}
