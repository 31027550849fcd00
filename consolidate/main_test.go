package consolidate

import (
	"fmt"
	"os"
	"testing"
)

// TestMain lets the test binary stand in for "mindmount merge-cursor" when git
// calls it as a merge driver (see TestRevertKeepsCursor).
func TestMain(m *testing.M) {
	if os.Getenv("MINDMOUNT_TEST_MERGE_DRIVER") == "1" {
		os.Exit(mergeDriverMain(os.Args[len(os.Args)-3:]))
	}
	os.Exit(runInOwnTmp(m))
}

// runInOwnTmp runs the tests with a temporary directory of their own,
// removed at the end: each test repository leaves a consolidation lock
// file in the temporary directory (lock_unix.go keeps them by design), and
// a run must leave $TMPDIR as it found it.
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

func mergeDriverMain(args []string) int {
	base, _ := os.ReadFile(args[0])
	ours, err := os.ReadFile(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	theirs, _ := os.ReadFile(args[2])
	_ = base
	// hooks.MergeFile's cursor rule in one step (hooks imports this package, so a
	// test here cannot import it): positions only move forward.
	o, err := ParseCursor(ours)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	t, err := ParseCursor(theirs)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	o.Merge(t)
	out := o.Render()
	if err := os.WriteFile(args[1], out, 0o644); err != nil {
		return 1
	}
	return 0
}
