package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTeamLaptopSyncTwoMembers: two personal repositories joined to one
// bare team remote, each mounted with its sync running, both writing into
// shared/eng at once — new memories of their own and lines appended to
// one memory they share — for a minute (a few seconds under -short).
// Afterwards both clones have the remote's HEAD, every write is in it,
// the remote passes git fsck, and its pre-receive hook, which refuses and
// logs any update that is not a fast-forward, logged nothing: the memory
// merge and fetch-then-retry did the work, never a force push.
func TestTeamLaptopSyncTwoMembers(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	if os.Geteuid() != 0 {
		t.Skip("mounts twice: run as root")
	}
	began := time.Now()
	dir := t.TempDir()
	remote := filepath.Join(dir, "eng.git")
	hookLog := filepath.Join(dir, "refused.log")
	runCmd(t, "init", filepath.Join(dir, "team-src"))
	gitRun(t, dir, "init", "-q", "--bare", remote)
	gitRun(t, remote, "symbolic-ref", "HEAD", "refs/heads/main")
	gitRun(t, remote, "config", "receive.denyNonFastForwards", "true")
	hook := `#!/bin/sh
z=0000000000000000000000000000000000000000
while read old new ref; do
  if [ "$new" = "$z" ]; then echo "delete $ref" >> "` + hookLog + `"; exit 1; fi
  if [ "$old" != "$z" ] && ! git merge-base --is-ancestor "$old" "$new"; then
    echo "non-fast-forward $ref $old $new" >> "` + hookLog + `"; exit 1
  fi
done
`
	if err := os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
	gitRun(t, filepath.Join(dir, "team-src"), "push", "-q", remote, "HEAD:main")

	members := []string{"alice", "bob"}
	mnts := map[string]string{}
	for _, m := range members {
		repo := filepath.Join(dir, m)
		runCmd(t, "init", repo)
		runCmd(t, "team", "join", repo, remote)
		mnt := filepath.Join(dir, m+"-mnt")
		if err := os.Mkdir(mnt, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd, logs := startMindmount(t, noModel, "mindmount: mounted "+repo+" at "+mnt,
			"mount", repo, mnt, "--debounce", "100ms", "--max-wait", "1s", "--push-delay", "300ms", "--fetch-every", "1s")
		t.Cleanup(func() { stopMindmount(t, cmd, logs) })
		mnts[m] = mnt
	}
	shared := func(m string, rel string) string {
		return filepath.Join(mnts[m], "shared", "eng", "user_memory", rel)
	}
	// The memory both append to, made by alice and waited for at bob's.
	const logMem = "team-log.md"
	head := "---\ndescription: What the team did, one line each\n---\n# Team Log\n\n## Fact\nThe team keeps a log.\n"
	if err := os.WriteFile(shared("alice", logMem), []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	waitLong(t, 60*time.Second, "bob sees alice's memory", func() bool {
		_, err := os.Stat(shared("bob", logMem))
		return err == nil
	})

	t.Logf("mounted, bob sees alice's first memory: %s", time.Since(began).Round(time.Millisecond))
	run := 60 * time.Second
	if testing.Short() {
		run = 5 * time.Second
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		files   []string // every memory file written
		lines   []string // every line appended to logMem
		writeMu sync.Mutex
	)
	stop := time.Now().Add(run)
	for _, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(stop); i++ {
				name := fmt.Sprintf("%s-note-%03d.md", m, i)
				body := fmt.Sprintf("---\ndescription: Note %d of %s\n---\n# Note %d Of %s\n\n## Fact\n%s noted thing %d.\n", i, m, i, m, m, i)
				if err := os.WriteFile(shared(m, name), []byte(body), 0o644); err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				mu.Lock()
				files = append(files, name)
				mu.Unlock()
				if i%3 == 0 {
					line := fmt.Sprintf("- %s appended line %d", m, i)
					writeMu.Lock() // one appender per mount at a time, as one shell would
					f, err := os.OpenFile(shared(m, logMem), os.O_WRONLY|os.O_APPEND, 0)
					if err == nil {
						_, err = f.WriteString(line + "\n")
						if cerr := f.Close(); err == nil {
							err = cerr
						}
					}
					writeMu.Unlock()
					if err != nil {
						t.Errorf("append to %s at %s: %v", logMem, m, err)
						return
					}
					mu.Lock()
					lines = append(lines, line)
					mu.Unlock()
				}
				time.Sleep(150 * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	t.Logf("writes done: %s", time.Since(began).Round(time.Millisecond))
	clone := func(m string) string { return filepath.Join(dir, m, ".git", "mindmount", "teams", "eng") }
	waitLong(t, 300*time.Second, "both clones at the remote's HEAD, nothing left to commit", func() bool {
		want := gitTry(remote, "rev-parse", "main")
		for _, m := range members {
			if gitTry(clone(m), "rev-parse", "HEAD") != want || gitTry(clone(m), "status", "--porcelain", "--untracked-files=no") != "" {
				return false
			}
		}
		return true
	})

	t.Logf("converged: %s", time.Since(began).Round(time.Millisecond))
	tree := gitTry(remote, "ls-tree", "-r", "--name-only", "main")
	for _, f := range files {
		if !strings.Contains(tree, "user_memory/"+f+"\n") && !strings.HasSuffix(tree, "user_memory/"+f) {
			t.Errorf("written %s, missing from the remote's HEAD", f)
		}
	}
	logText := gitTry(remote, "show", "main:user_memory/"+logMem)
	for _, l := range lines {
		if !strings.Contains(logText, l+"\n") && !strings.HasSuffix(logText, l) {
			t.Errorf("appended %q, missing from the remote's %s", l, logMem)
		}
	}
	if b, err := os.ReadFile(hookLog); err == nil {
		t.Errorf("the remote refused a push that was not a fast-forward:\n%s", b)
	}
	if out, err := exec.Command("git", "-C", remote, "fsck", "--no-progress").CombinedOutput(); err != nil {
		t.Errorf("git fsck on the remote: %v\n%s", err, out)
	}
	if t.Failed() {
		t.Logf("remote tree:\n%s\n%s:\n%s\nlog:\n%s", tree, logMem, logText, gitTry(remote, "log", "--format=%h %p %an %s", "main"))
	}
	t.Logf("%d memories and %d appended lines by 2 members in %s, all on the remote", len(files), len(lines), run)
}

// gitRun runs git in dir and fails the test on an error.
func gitRun(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// gitTry is git's trimmed output in dir, "" on an error (a clone
// caught between a fetch and a merge answers again at the next poll).
func gitTry(dir string, args ...string) string {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// waitLong polls cond until it holds, failing the test after limit: a
// bound that only catches a hang, never a measure of speed.
func waitLong(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("waited %s for %s", limit, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
