package host

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
)

// TestIsOutOfFiles: running out of descriptors is recognised by its errno
// through every wrapping between the watcher and Host (fsnotify, the
// tracker, Start), never by a message's words.
func TestIsOutOfFiles(t *testing.T) {
	wrapped := fmt.Errorf("start: %w", fmt.Errorf("start file watcher: %w", fmt.Errorf("couldn't initialize inotify: %w", syscall.EMFILE)))
	for _, err := range []error{syscall.EMFILE, syscall.ENFILE, wrapped} {
		if !isOutOfFiles(err) {
			t.Errorf("isOutOfFiles(%v) = false", err)
		}
	}
	for _, err := range []error{nil, syscall.ENOENT, errors.New("too many open files")} {
		if isOutOfFiles(err) {
			t.Errorf("isOutOfFiles(%v) = true", err)
		}
	}
}
