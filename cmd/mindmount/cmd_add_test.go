package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/memgraph"
)

// addCmd runs "mindmount add" in this process and returns its exit code,
// stdout and stderr.
func addCmd(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(append([]string{"add"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// TestAdd: mindmount add writes a valid memory named from its description
// as consolidation names one (a slug, -2 when taken), commits it, and
// prints its path; the file passes the repository's own check.
func TestAdd(t *testing.T) {
	requireGitCLI(t)
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo, "--user", "Ada")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"You are allergic to peanuts.", "--topic", "allergy"}, "user_memory/you-are-allergic-to-peanuts.md"},
		{[]string{"Loves green tea, sencha above all.", "--description", "Likes Green Tea"}, "user_memory/likes-green-tea.md"},
		{[]string{"Also likes matcha.", "--description", "Likes green tea"}, "user_memory/likes-green-tea-2.md"},
		{[]string{"Answer in two sentences at most.", "--kind", "character", "--description", "Be brief"}, "character_memory/be-brief.md"},
	} {
		code, out, errOut := addCmd(append([]string{repo}, tc.args...)...)
		if code != 0 || strings.TrimSpace(out) != tc.want {
			t.Fatalf("add %q: exit %d, printed %q, want %s\n%s", tc.args, code, out, tc.want, errOut)
		}
		data, err := os.ReadFile(filepath.Join(repo, tc.want))
		if err != nil {
			t.Fatal(err)
		}
		if probs := memgraph.Validate(tc.want, data, nil); len(probs) > 0 {
			t.Errorf("%s is not valid: %v\n%s", tc.want, probs, data)
		}
		if got := gitOut(t, repo, "log", "-1", "--format=%an|%s", "--name-only"); got != "add|add "+tc.want+"\n\n"+tc.want {
			t.Errorf("last commit:\n%s", got)
		}
	}
	data, _ := os.ReadFile(filepath.Join(repo, "user_memory/you-are-allergic-to-peanuts.md"))
	if !strings.Contains(string(data), "topic: allergy") || !strings.Contains(string(data), "You are allergic to peanuts.") {
		t.Errorf("the memory lost its topic or fact:\n%s", data)
	}
	if st := gitOut(t, repo, "status", "--porcelain"); st != "" {
		t.Errorf("left changes uncommitted:\n%s", st)
	}
	runCmd(t, "check", repo)
}

// TestAddRefuses: a secret in the fact, a topic the format does not allow
// and a repository on a read-only file system are refused; nothing is
// written or committed, and the error never quotes the secret.
func TestAddRefuses(t *testing.T) {
	requireGitCLI(t)
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo, "--user", "Ada")
	head := gitOut(t, repo, "rev-parse", "HEAD")
	secret := plantedStripe
	for _, args := range [][]string{
		{"My stripe key is " + secret, "--description", "Stripe key"},
		{"Lives in Porto.", "--topic", "Home City"},
	} {
		code, out, errOut := addCmd(append([]string{repo}, args...)...)
		if code == 0 || !strings.Contains(errOut, "nothing was added") {
			t.Errorf("add %q: exit %d, %q\n%s", args, code, out, errOut)
		}
		if strings.Contains(errOut, secret) {
			t.Errorf("the error quotes the secret:\n%s", errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(repo, "user_memory/stripe-key.md")); err == nil {
		t.Error("the refused memory was written")
	}
	if os.Geteuid() == 0 && exec.Command("mount", "--bind", repo, repo).Run() == nil {
		defer func() {
			// Lazily: this process still holds a handle of the repository.
			if out, err := exec.Command("umount", "-l", repo).CombinedOutput(); err != nil {
				t.Errorf("umount: %v %s", err, out)
			}
		}()
		if out, err := exec.Command("mount", "-o", "remount,bind,ro", repo).CombinedOutput(); err != nil {
			t.Fatalf("remount read-only: %v %s", err, out)
		}
		code, _, errOut := addCmd(repo, "Lives in Porto.")
		if code == 0 || !strings.Contains(errOut, "read-only file system") {
			t.Errorf("add on a read-only repository: exit %d\n%s", code, errOut)
		}
	}
	if got := gitOut(t, repo, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved from %s to %s", head, got)
	}
}

// TestAddThroughTheDaemon: while a mount serves the repository, mindmount
// add hands the memory to it over the control socket: the mount's tracker
// commits it (its log says so) and the mount shows it at once.
func TestAddThroughTheDaemon(t *testing.T) {
	requireFUSE(t)
	requireGitCLI(t)
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo, "--user", "Ada")
	mnt := t.TempDir()
	daemon, logs := startMindmount(t, noModel, "mindmount: mounted "+repo+" at "+mnt,
		"mount", repo, mnt, "--debounce", "50ms", "--consolidate=false")
	defer stopMindmount(t, daemon, logs)
	code, out, errOut := addCmd(repo, "You are allergic to peanuts.", "--description", "Allergic to peanuts")
	const rel = "user_memory/allergic-to-peanuts.md"
	if code != 0 || strings.TrimSpace(out) != rel {
		t.Fatalf("add beside the mount: exit %d %q\n%s\n%s", code, out, errOut, logs.String())
	}
	if _, err := os.Stat(filepath.Join(mnt, rel)); err != nil {
		t.Errorf("the mount does not show %s: %v", rel, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(logs.String(), "author=add") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "author=add") {
		t.Errorf("the daemon did not commit it:\n%s", logs.String())
	}
	if got := gitOut(t, repo, "log", "--format=%an", "--", rel); got != "add" {
		t.Errorf("commits of %s by %q, want one by add", rel, got)
	}
}
