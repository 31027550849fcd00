//go:build !unix

package consolidate

import "errors"

// ErrBusy means another process is consolidating the same repository.
var ErrBusy = errors.New("another process is consolidating this repository")

// lockRepo is a no-op where flock is unavailable; within one process the
// per-repository mutex still serialises runs.
func lockRepo(gitDir string) (func(), error) { return func() {}, nil }

// dreamHold is a run's claim on its dream; without flock, review sees no
// claim.
type dreamHold struct{}

func holdDreams(string) (*dreamHold, error) { return &dreamHold{}, nil }
func (*dreamHold) set(string) error         { return nil }
func (*dreamHold) release()                 {}
func heldDream(string) (string, error)      { return "", nil }
