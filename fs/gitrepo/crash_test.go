package gitrepo

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/fs/gitrepo/failpoint"
)

// crashChild runs this test binary again as a child that opens dir and
// commits one file with the failpoint point armed, so it dies by SIGKILL
// there. The parent then sees exactly what a crashed daemon leaves behind.
// mode is how the child commits: "commit" (the file is on disk already),
// "apply" (Record writes it) or "merge" (a two-parent merge commit with
// side, written into the work tree like a sync's).
func crashChild(t *testing.T, dir, point, mode, side string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestCrashChild$")
	cmd.Env = append(os.Environ(), "CRASH_DIR="+dir, "CRASH_MODE="+mode, "CRASH_SIDE="+side, failpoint.EnvVar+"="+point)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ProcessState.String() != "signal: killed" {
		t.Fatalf("child at %s: %v, want killed\n%s", point, err, out)
	}
}

// TestCrashChild is the child of crashChild; it does nothing when run
// directly.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("CRASH_DIR")
	if dir == "" {
		t.Skip("run by crashChild")
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := put("user_memory/b.md", "two\n")
	switch os.Getenv("CRASH_MODE") {
	case "apply":
		_, err = r.Apply([]Change{c}, "child", who, when)
	case "dirty":
		var unlock func()
		if unlock, err = r.LockDaemon(); err == nil {
			defer unlock()
			_, err = r.Dirty()
		}
	case "merge":
		var head string
		if head, err = r.Head(); err == nil {
			_, err = r.Record(Commit{Changes: []Change{c}, Message: "child", Author: who, When: when,
				Parents: []string{head, os.Getenv("CRASH_SIDE")}, Worktree: true, Clean: true})
		}
	default:
		os.WriteFile(filepath.Join(dir, "user_memory/b.md"), c.Data, 0o644)
		_, err = r.Commit([]Change{c}, "child", who, when)
	}
	t.Fatalf("commit returned (%v) instead of dying at the failpoint", err)
}

// TestCrashMidCommitNeedsNoRepair kills a committing process at every
// failpoint of the commit sequence — a commit, an apply and a merge commit
// alike — and checks that RecoverLocks alone (what the tracker runs at
// start) leaves a repository that git finds sound and clean, the branch
// either moved with every object present or not moved, and that the next
// commit works: no stale index.lock, no phantom changes in "git status".
func TestCrashMidCommitNeedsNoRepair(t *testing.T) {
	points := []string{failpoint.WorktreeWritten, failpoint.IndexLocked, failpoint.ObjectsWritten, failpoint.RefUpdated, failpoint.IndexWritten, failpoint.IndexRenamed}
	for _, point := range points {
		for _, mode := range []string{"commit", "apply", "merge"} {
			if point == failpoint.WorktreeWritten && mode == "commit" {
				continue // a commit writes no work tree
			}
			t.Run(point+"/"+mode, func(t *testing.T) {
				r, dir := tempRepo(t)
				writeFile(t, dir, "user_memory/a.md", "one\n")
				if _, err := r.Commit([]Change{put("user_memory/a.md", "one\n")}, "seed", who, when); err != nil {
					t.Fatal(err)
				}
				var side string
				before, _ := r.Head()
				if mode == "merge" {
					side = sideCommit(t, r, before)
				}
				crashChild(t, dir, point, mode, side)
				lock := filepath.Join(dir, ".git", "index.lock")
				_, lockErr := os.Stat(lock)
				stale := lockErr == nil
				if want := point != failpoint.IndexRenamed && point != failpoint.WorktreeWritten; stale != want {
					t.Fatalf("index.lock left behind: %v, want %v", stale, want)
				}

				r2, err := Open(dir)
				if err != nil {
					t.Fatal(err)
				}
				lr, err := r2.RecoverLocks()
				if err != nil {
					t.Fatal(err)
				}
				if stale && len(lr.Removed) == 0 {
					t.Fatalf("stale lock not removed: %+v", lr)
				}
				if len(lr.Foreign) != 0 {
					t.Fatalf("own lock taken for a foreign one: %+v", lr)
				}
				if point == failpoint.RefUpdated || point == failpoint.IndexWritten {
					if !slices.Contains(lr.IndexFixed, "user_memory/b.md") {
						t.Fatalf("index not repaired after the ref moved: %+v", lr)
					}
				}
				head := gitCmd(t, dir, "log", "-1", "--format=%s")
				if head == "child" {
					// The commit landed, with every object (fsck) and
					// both parents of a merge: the tree is clean.
					checkClean(t, dir)
					want := before
					if mode == "merge" {
						want += " " + side
					}
					if got := gitCmd(t, dir, "log", "-1", "--format=%P"); got != want {
						t.Fatalf("parents %q, want %q", got, want)
					}
				} else {
					if now, _ := r2.Head(); now != before {
						t.Fatalf("HEAD %s is neither the child's commit nor the one before (%s)", now, before)
					}
					// It did not: the file is an ordinary uncommitted
					// change (Apply wrote it), never a phantom one.
					gitCmd(t, dir, "fsck", "--strict", "--no-progress")
					st := gitCmd(t, dir, "status", "--porcelain", "--untracked-files=all")
					if st != "" && st != "?? user_memory/b.md" {
						t.Fatalf("status after a crash before the ref moved:\n%s", st)
					}
				}
				writeFile(t, dir, "user_memory/c.md", "three\n")
				if _, err := r2.Commit([]Change{put("user_memory/c.md", "three\n"), put("user_memory/b.md", "two\n")}, "after", who, when); err != nil {
					t.Fatalf("commit after recovery: %v", err)
				}
				checkClean(t, dir)
			})
		}
	}
}

// sideCommit makes a commit on a side branch from base, as a fetched
// remote's commit would be, and returns it.
func sideCommit(t *testing.T, r *Repo, base string) string {
	t.Helper()
	h, err := r.Record(Commit{Changes: []Change{put("user_memory/side.md", "side\n")}, Message: "side", Author: who, When: when,
		Branch: "side", Parents: []string{base}})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestForeignLockLeftAlone: a lock mindmount did not record (a git command
// holds it) or one a live mindmount process owns is never removed.
func TestForeignLockLeftAlone(t *testing.T) {
	r, dir := tempRepo(t)
	lock := filepath.Join(dir, ".git", "index.lock")
	os.WriteFile(lock, nil, 0o644)
	lr, err := r.RecoverLocks()
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Removed) != 0 || len(lr.Foreign) != 1 {
		t.Fatalf("foreign lock: %+v", lr)
	}
	// An owner record naming a live process (this one) with the lock's
	// inode: still not stale.
	fi, _ := os.Stat(lock)
	o := lockOwner{pid: os.Getpid(), start: selfStart, ino: statOf(fi).ino, lock: lock}
	os.WriteFile(r.ownerPath("index"), []byte(o.String()), 0o644)
	if lr, _ := r.RecoverLocks(); len(lr.Removed) != 0 {
		t.Fatalf("lock of a live owner removed: %+v", lr)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatal("lock gone")
	}
}

func writeFile(t *testing.T, dir, rel, data string) {
	t.Helper()
	abs := filepath.Join(dir, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(abs), 0o755)
	if err := os.WriteFile(abs, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseOwner(f *testing.F) {
	f.Add([]byte("12 345 678 /r/.git/index.lock\n"))
	f.Add([]byte("x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		o, ok := parseOwner(b)
		if !ok {
			return
		}
		back, ok := parseOwner([]byte(o.String()))
		if !ok || back != o {
			if !strings.Contains(o.lock, "\n") {
				t.Fatalf("round trip %q: %+v != %+v", b, back, o)
			}
		}
	})
}
