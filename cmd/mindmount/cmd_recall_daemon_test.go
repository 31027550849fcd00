package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mindmount/mindmount/serve/control"
)

// recallDaemonRepo makes a repository holding one memory and starts a
// watch daemon on it; stop it with stopMindmount.
func recallDaemonRepo(t *testing.T, fact string) (string, *exec.Cmd, *logBuffer) {
	t.Helper()
	repo := filepath.Join(t.TempDir(), "memory")
	runCmd(t, "init", repo, "--user", "Ada")
	runCmd(t, "add", repo, fact)
	cmd, logs := startMindmount(t, noModel, "mindmount: watching "+repo, "watch", repo, "--consolidate=false")
	return repo, cmd, logs
}

// askRecall asks the daemon of repo's socket directly.
func askRecall(t *testing.T, repo string, q control.Question) []string {
	t.Helper()
	a, err := control.Ask(context.Background(), filepath.Join(repo, ".git"), control.Request{Verb: control.Recall, Question: &q})
	if err != nil {
		t.Fatalf("recall %q on %s's socket: %v", q.Q, repo, err)
	}
	var res control.RecallResult
	if err := json.Unmarshal(a.Data, &res); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, h := range res.Hits {
		paths = append(paths, h.Path)
	}
	return paths
}

// TestRecallThroughTheDaemon: while a daemon serves the repository,
// "mindmount recall" is answered by it, with what the command finds by
// itself; each daemon's socket answers its own repository's memories
// only, whatever the question.
func TestRecallThroughTheDaemon(t *testing.T) {
	requireGitCLI(t)
	a, da, la := recallDaemonRepo(t, "You drink oolong tea every evening.") // stopped below; killed at cleanup if not
	b, db, lb := recallDaemonRepo(t, "You keep a pet axolotl named Quill.")
	defer stopMindmount(t, db, lb)

	if got := askRecall(t, a, control.Question{Q: "axolotl named Quill"}); len(got) != 0 {
		t.Errorf("A's daemon answers B's memory: %v", got)
	}
	if got := askRecall(t, b, control.Question{Q: "oolong tea"}); len(got) != 0 {
		t.Errorf("B's daemon answers A's memory: %v", got)
	}
	if got := askRecall(t, a, control.Question{Q: "oolong tea"}); len(got) != 1 || !strings.HasPrefix(got[0], "user_memory/") {
		t.Errorf("A's daemon on its own memory: %v", got)
	}

	cli := exec.Command(mindmountBinary(t), "recall", a, "what tea do I drink", "--json")
	cli.Env = append(os.Environ(), "MINDMOUNT_DEBUG=1")
	var errb strings.Builder
	cli.Stderr = &errb
	through, err := cli.Output()
	if err != nil || !strings.Contains(errb.String(), "answered by the daemon") {
		t.Fatalf("recall beside the daemon: %v, not answered by it:\n%s", err, errb.String())
	}
	stopMindmount(t, da, la)
	alone, errs, code := runMindmount(t, "recall", a, "what tea do I drink", "--json")
	if code != 0 {
		t.Fatalf("recall without a daemon: exit %d: %s", code, errs)
	}
	if string(through) != alone || !strings.Contains(alone, "oolong") {
		t.Errorf("through the daemon:\n%s\nin-process:\n%s", through, alone)
	}
}

// TestRecallDaemonRefusesAnotherUser: a process of another uid that
// reaches a daemon's socket (made reachable on purpose, so only the
// peer check stands in the way) is refused, and its "mindmount recall"
// is not answered by the daemon. Needs root to run the other uid.
func TestRecallDaemonRefusesAnotherUser(t *testing.T) {
	requireGitCLI(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a process as another uid")
	}
	bin := mindmountBinary(t)
	repo, d, logs := recallDaemonRepo(t, "You drink oolong tea every evening.")
	defer stopMindmount(t, d, logs)
	gitDir := filepath.Join(repo, ".git")
	for _, p := range []string{filepath.Join(gitDir, "mindmount"), bin} {
		for d := p; d != "/"; d = filepath.Dir(d) {
			if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
				os.Chmod(d, fi.Mode().Perm()|0o055)
			}
		}
	}
	os.Chmod(filepath.Join(gitDir, control.SocketFile), 0o666)
	cli := exec.Command(bin, "recall", repo, "oolong tea", "--json")
	cli.Env = append(os.Environ(), "MINDMOUNT_DEBUG=1", "HOME="+t.TempDir())
	cli.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, _ := cli.CombinedOutput()
	if strings.Contains(string(out), "answered by the daemon") || !strings.Contains(string(out), control.ErrRefused.Error()) {
		t.Errorf("uid 65534's recall was not refused by the daemon:\n%s", out)
	}
	if !strings.Contains(logs.String(), "control request refused") {
		t.Errorf("the daemon did not log the refusal:\n%s", logs.String())
	}
	var ce *control.Error
	if _, err := control.Ask(context.Background(), gitDir, control.Request{Verb: control.Recall, Question: &control.Question{Q: "oolong"}}); err != nil && errors.As(err, &ce) {
		t.Errorf("the owner is refused too: %v", err)
	}
}
