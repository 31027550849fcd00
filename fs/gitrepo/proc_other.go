//go:build !linux

package gitrepo

import (
	"errors"
	"os"
	"syscall"
)

var selfStart uint64

// processAlive asks the kernel whether pid exists; without /proc a reused
// pid cannot be told apart.
func processAlive(pid int, _ uint64) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}

var errWouldBlock = errors.New("would block")

// flock is a no-op where flock(2) is unavailable.
func flock(*os.File) error { return nil }
