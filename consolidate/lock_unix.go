//go:build unix

package consolidate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrBusy means another process is consolidating the same repository.
var ErrBusy = errors.New("another process is consolidating this repository")

// lockRepo takes an advisory lock shared by every process on this machine
// (the daemon and "mindmount consolidate" must not consolidate the same
// messages twice). The lock file lives in the repository's git directory
// (gitDir/mindmount/consolidate.lock), so nothing appears in the work tree,
// and not in the shared temp directory, where another user could take its
// predictable name first (and where it was left behind for good).
func lockRepo(gitDir string) (unlock func(), err error) {
	dir := filepath.Join(gitDir, "mindmount")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("consolidation lock: %w", err)
	}
	name := filepath.Join(dir, "consolidate.lock")
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("consolidation lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("consolidation lock: %w", err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
