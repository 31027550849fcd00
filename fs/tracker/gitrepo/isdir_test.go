package gitrepo

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// TestIsDirErr: reading a directory as a file is recognised by its errno
// (EISDIR), wrapped or not, never by the words of a message.
func TestIsDirErr(t *testing.T) {
	_, err := os.ReadFile(t.TempDir())
	if !isDirErr(err) || !isDirErr(fmt.Errorf("read: %w", err)) {
		t.Fatalf("isDirErr(%v) = false", err)
	}
	for _, e := range []error{nil, os.ErrNotExist, errors.New("x is a directory")} {
		if isDirErr(e) {
			t.Errorf("isDirErr(%v) = true", e)
		}
	}
}
