//go:build unix

package consolidate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// dreamHold is a run's claim on the dream it writes: the dream is not a
// proposal yet, so review neither lists nor merges it until the run ends.
// The claim is an exclusive flock on gitDir/mindmount/dream.lock holding
// the branch's name; flock is per open file, so it is seen by this process
// (the daemon's HTTP API, web page and control socket) and by every other
// (the CLI) alike, and a run that dies releases it with its descriptor.
type dreamHold struct{ f *os.File }

// holdDreams takes the claim (waiting the moment a reader may hold it).
func holdDreams(gitDir string) (*dreamHold, error) {
	f, err := openDreamLock(gitDir, os.O_CREATE|os.O_RDWR)
	if err != nil {
		return nil, fmt.Errorf("dream lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("dream lock: %w", err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("dream lock: %w", err)
	}
	return &dreamHold{f}, nil
}

// set names the branch the run now writes (before its first commit).
func (h *dreamHold) set(branch string) error {
	if _, err := h.f.WriteAt([]byte(branch+"\n"), 0); err != nil {
		return fmt.Errorf("dream lock: %w", err)
	}
	return h.f.Truncate(int64(len(branch) + 1))
}

// release ends the claim: the dream, if it waits, is now a proposal.
func (h *dreamHold) release() {
	h.f.Truncate(0)
	syscall.Flock(int(h.f.Fd()), syscall.LOCK_UN)
	h.f.Close()
}

// heldDream is the branch a running consolidation holds, "" when none.
func heldDream(gitDir string) (string, error) {
	f, err := openDreamLock(gitDir, os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("dream lock: %w", err)
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return "", nil // no run holds it: what it names is stale
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		return "", fmt.Errorf("dream lock: %w", err)
	}
	b := make([]byte, 256)
	n, _ := f.ReadAt(b, 0)
	return strings.TrimSpace(string(b[:n])), nil
}

func openDreamLock(gitDir string, flag int) (*os.File, error) {
	dir := filepath.Join(gitDir, "mindmount")
	if flag&os.O_CREATE != 0 {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	return os.OpenFile(filepath.Join(dir, "dream.lock"), flag|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
}
