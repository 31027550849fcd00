package httpapi

import (
	"fmt"
	"os"
	"testing"
)

// TestMain runs the tests with a temporary directory of their own, removed
// at the end: consolidation leaves a lock file per repository in the
// temporary directory (consolidate/lock_unix.go keeps them by design), and
// a run must leave $TMPDIR as it found it.
func TestMain(m *testing.M) {
	os.Exit(runInOwnTmp(m))
}

func runInOwnTmp(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "mm")
	if err != nil {
		fmt.Fprintln(os.Stderr, "test temp dir:", err)
		return 1
	}
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	if err := os.RemoveAll(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "removing the test temp dir:", err)
		return max(code, 1)
	}
	return code
}
