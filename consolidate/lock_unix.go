//go:build unix

package consolidate

import (
	"crypto/sha256"
	"encoding/hex"
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
// messages twice). The lock file lives in the temp directory, named by the
// repository path, so nothing appears in the work tree.
func lockRepo(dir string) (unlock func(), err error) {
	sum := sha256.Sum256([]byte(dir))
	name := filepath.Join(os.TempDir(), "mindmount-consolidate-"+hex.EncodeToString(sum[:8])+".lock")
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o600)
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
