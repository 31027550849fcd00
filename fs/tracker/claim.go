package tracker

import (
	"fmt"
	"strings"

	"github.com/mindmount/mindmount/fs/gitrepo"
)

// ErrDaemonRunning is returned by Recover and Run when another process
// (mindmount mount, watch, serve or mcp) already serves the repository.
var ErrDaemonRunning = gitrepo.ErrDaemonRunning

// claim makes this tracker the repository's one writer, once: it takes the
// daemon lock (a second daemon on the same repository is refused, and so
// is a lone writer, tracker.Alone, in this process or another; the kernel
// drops the lock when the process dies) and then repairs what a
// crash of the previous writer left in .git — its stale lock files and an
// index that lags HEAD — saying what it did. Recover and Run call it, so
// every front that starts a tracker gets both.
func (t *Tracker) claim() error {
	t.claimMu.Lock()
	defer t.claimMu.Unlock()
	if t.unlock != nil {
		return nil
	}
	unlock, err := t.r.LockServe()
	if err != nil {
		return err
	}
	t.unlock = unlock
	lr, err := t.r.RecoverLocks()
	for _, p := range lr.Removed {
		t.log.Warn("removed a lock file left by a mindmount process that crashed mid-commit", "path", p)
	}
	for _, p := range lr.Foreign {
		t.log.Warn("a git command holds a lock in the repository; commits wait until it is released", "path", p)
	}
	if n := len(lr.IndexFixed); n > 0 {
		t.log.Warn("repaired .git/index against HEAD (it lagged a commit interrupted by a crash); the work tree was not touched",
			"paths", n, "first", strings.Join(lr.IndexFixed[:min(n, 5)], ", "))
	}
	if err != nil {
		return fmt.Errorf("repair after a crash: %w", err)
	}
	return nil
}

// Close gives up the repository: the daemon lock is released so another
// process may serve it. Call it after the last Flush or Sweep.
func (t *Tracker) Close() error {
	t.claimMu.Lock()
	defer t.claimMu.Unlock()
	if t.unlock != nil {
		t.unlock()
		t.unlock = nil
	}
	return nil
}
