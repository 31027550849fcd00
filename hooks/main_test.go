package hooks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain doubles as the "mindmount" the installed hook and the merge
// drivers call: the tests put a link named mindmount to this test binary on
// PATH, so the script git runs is the real one, finding mindmount by name.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "mindmount" {
		os.Exit(fakeMindmount(os.Args[1:]))
	}
	os.Exit(m.Run())
}

func fakeMindmount(args []string) int {
	var err error
	switch {
	case len(args) >= 2 && args[0] == "hook" && args[1] == "pre-commit":
		err = PreCommit(context.Background(), os.Stderr)
	case len(args) == 4 && args[0] == "merge-cursor":
		err = CursorDriver(args[1], args[2], args[3])
	case len(args) == 5 && args[0] == "merge-memory":
		err = MemoryDriver(args[1], args[2], args[3], args[4], os.Stderr)
	default:
		err = fmt.Errorf("fake mindmount: unknown command %q", args)
	}
	if errors.Is(err, ErrRefused) || errors.Is(err, ErrConflict) {
		return 1
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// mindmountOnPath puts "mindmount" (this test binary) on PATH for the test.
func mindmountOnPath(t *testing.T) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "mindmount")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}
