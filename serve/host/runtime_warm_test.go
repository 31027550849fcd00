package host

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Start returns once what a first request would otherwise build is built:
// the recall index (OpenRepo starts it in the background, Scan does not
// build it) and the work tree's size count.
func TestStartWarmsRecall(t *testing.T) {
	dir := newUser(t, t.TempDir(), "ada")
	for i := 0; i < 300; i++ {
		body := fmt.Sprintf("---\ndescription: Fact %d about coffee\n---\n# Fact %d\n\n## Fact\nThe user said fact %d.\n", i, i, i)
		if err := os.WriteFile(filepath.Join(dir, "user_memory", fmt.Sprintf("fact-%d.md", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-qm", "facts"}} {
		if out, err := exec.Command("git", append([]string{"-c", "safe.directory=" + dir, "-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	rt, err := OpenRuntime(dir, RuntimeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	if !rt.Graph.RecallBuilt() {
		t.Fatal("Start returned before the recall index was built: the first recall would build it")
	}
	if n := rt.Graph.RecallIndex().Len(); n < 300 {
		t.Fatalf("recall index holds %d memories, want at least 300", n)
	}
	// The built index is saved in the git directory, private, by the
	// repository's owner only: root serving a user's repository (as
	// here, when the test runs as root) writes no file of its own in it.
	// Git never sees it: the work tree stays clean, nothing to commit.
	file := RecallFile(rt.Repo)
	gi, _ := os.Stat(rt.Repo.GitDir())
	if owner := gi.Sys().(*syscall.Stat_t).Uid; int(owner) == os.Geteuid() {
		deadline := time.Now().Add(60 * time.Second) // saved just after the build; only catches a hang
		for fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600; fi, err = os.Stat(file) {
			if time.Now().After(deadline) {
				t.Fatalf("saved recall index: %v, %v", fi, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	} else if _, err := os.Stat(file); err == nil {
		t.Fatalf("uid %d saved a recall index in the repository of uid %d", os.Geteuid(), owner)
	}
	out, err := exec.Command("git", "-c", "safe.directory="+dir, "-C", dir, "status", "--porcelain", "--ignored", "--untracked-files=all").CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Fatalf("git status after the index was saved: %v\n%s", err, out)
	}
}
