package gitrepo

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// deadPid returns the pid of a process that has exited (and been reaped).
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if procStart(pid) != 0 {
		t.Skipf("pid %d was reused at once", pid)
	}
	return pid
}

// replaceLock puts a new file at lock the way a git command re-creating
// the lock would: a fresh inode, never the recorded one (the new file
// exists before the old goes, so the kernel cannot hand out the same
// inode number again).
func replaceLock(t *testing.T, lock string) {
	t.Helper()
	tmp := lock + ".new"
	if err := os.WriteFile(tmp, []byte("git's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, lock); err != nil {
		t.Fatal(err)
	}
}

func inoOf(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return statOf(fi).ino
}

// TestRecoverLocksOwnership: RecoverLocks removes a lock only when its
// owner record names a process that is gone (a live pid with another start
// time is a reused pid: gone) and the record's inode is the lock's; a lock
// re-created since (another inode, or older than an inode-0 record) is a
// git command's and stays. The owner record goes either way.
func TestRecoverLocksOwnership(t *testing.T) {
	cases := []struct {
		name string
		kind string // "index" or "ref"
		// owner builds the record for the lock file at lock (already
		// created); it may change the lock as a git command would.
		owner   func(t *testing.T, lock string) lockOwner
		removed bool
	}{
		{
			name: "dead owner, same inode: stale, removed",
			kind: "index",
			owner: func(t *testing.T, lock string) lockOwner {
				return lockOwner{pid: deadPid(t), start: 12345, ino: inoOf(t, lock), lock: lock}
			},
			removed: true,
		},
		{
			name: "reused pid (alive, another start time), same inode: stale, removed",
			kind: "index",
			owner: func(t *testing.T, lock string) lockOwner {
				return lockOwner{pid: os.Getpid(), start: selfStart + 1, ino: inoOf(t, lock), lock: lock}
			},
			removed: true,
		},
		{
			name: "reused pid of the ref lock: stale, removed",
			kind: "ref",
			owner: func(t *testing.T, lock string) lockOwner {
				return lockOwner{pid: os.Getpid(), start: selfStart + 1, ino: inoOf(t, lock), lock: lock}
			},
			removed: true,
		},
		{
			name: "dead owner, lock re-created by git since (another inode): left",
			kind: "index",
			owner: func(t *testing.T, lock string) lockOwner {
				o := lockOwner{pid: deadPid(t), start: 12345, ino: inoOf(t, lock), lock: lock}
				replaceLock(t, lock)
				return o
			},
		},
		{
			name: "reused pid, lock re-created by git since: left",
			kind: "index",
			owner: func(t *testing.T, lock string) lockOwner {
				o := lockOwner{pid: os.Getpid(), start: selfStart + 1, ino: inoOf(t, lock), lock: lock}
				replaceLock(t, lock)
				return o
			},
		},
		{
			name: "dead owner of the ref lock, re-created by git since: left",
			kind: "ref",
			owner: func(t *testing.T, lock string) lockOwner {
				o := lockOwner{pid: deadPid(t), start: 12345, ino: inoOf(t, lock), lock: lock}
				replaceLock(t, lock)
				return o
			},
		},
		{
			name: "live owner (this process): left",
			kind: "index",
			owner: func(t *testing.T, lock string) lockOwner {
				return lockOwner{pid: os.Getpid(), start: selfStart, ino: inoOf(t, lock), lock: lock}
			},
		},
		{
			name: "dead owner that crashed before recording the inode, lock newer than the record: removed",
			kind: "index",
			owner: func(t *testing.T, lock string) lockOwner {
				// The record is written first, the lock after it.
				later := time.Now().Add(time.Minute)
				if err := os.Chtimes(lock, later, later); err != nil {
					t.Fatal(err)
				}
				return lockOwner{pid: deadPid(t), start: 12345, lock: lock}
			},
			removed: true,
		},
		{
			name: "dead owner that crashed before recording the inode, lock older than the record: left",
			kind: "index",
			owner: func(t *testing.T, lock string) lockOwner {
				old := time.Now().Add(-time.Hour)
				if err := os.Chtimes(lock, old, old); err != nil {
					t.Fatal(err)
				}
				return lockOwner{pid: deadPid(t), start: 12345, lock: lock}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, dir := tempRepo(t)
			lock := filepath.Join(dir, ".git", "index.lock")
			if tc.kind == "ref" {
				lock = filepath.Join(dir, ".git", "refs", "heads", "main.lock")
				os.MkdirAll(filepath.Dir(lock), 0o755)
			}
			if err := os.WriteFile(lock, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			o := tc.owner(t, lock)
			if err := os.WriteFile(r.ownerPath(tc.kind), []byte(o.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			lr, err := r.RecoverLocks()
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Lstat(lock)
			gone := os.IsNotExist(statErr)
			if gone != tc.removed || slices.Contains(lr.Removed, lock) != tc.removed {
				t.Fatalf("lock removed %v (reported %v), want %v: %+v", gone, lr.Removed, tc.removed, lr)
			}
			if !tc.removed && tc.kind == "index" && !slices.Contains(lr.Foreign, lock) {
				t.Errorf("a lock left alone is not reported as foreign: %+v", lr)
			}
			live := o.pid == os.Getpid() && o.start == selfStart
			if _, err := os.Lstat(r.ownerPath(tc.kind)); os.IsNotExist(err) == live {
				t.Errorf("owner record kept %v, want %v (a live owner's record stays, any other goes)", !os.IsNotExist(err), live)
			}
		})
	}
}
