package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestMain gives the tests a temporary directory of their own, removed at
// the end, so a run leaves $TMPDIR as it found it: the built binary
// (mindmountBinary) and the consolidation lock files, which are named by
// repository and outlive a run by design (consolidate/lock_unix.go), go
// there, also from the daemons the tests start (they inherit TMPDIR).
func TestMain(m *testing.M) {
	// A command a test runs in this process re-executes this binary as a
	// repository's owner (asOwner): then it is mindmount, not the tests.
	if os.Getenv(ownerEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(runInOwnTmp(m))
}

func runInOwnTmp(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "mm")
	if err != nil {
		fmt.Fprintln(os.Stderr, "test temp dir:", err)
		return 1
	}
	// Like /tmp: tests run processes as other uids that make their own
	// temporary files.
	if err := os.Chmod(tmp, os.ModeSticky|0o777); err != nil {
		fmt.Fprintln(os.Stderr, "test temp dir:", err)
		return 1
	}
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	// Never remove through a mount a test left behind: that would delete
	// the files of the repository it serves. Leave it all and say so.
	if left := mountsBelow(tmp); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "mounts left below %s (not removed): %s\n", tmp, strings.Join(left, ", "))
		return max(code, 1)
	}
	if err := os.RemoveAll(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "removing the test temp dir:", err)
		return max(code, 1)
	}
	return code
}

// mountsBelow lists the mount points at or below dir (/proc/self/mounts).
func mountsBelow(dir string) []string {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		mnt := unescapeMountField(fields[1])
		if mnt == dir || strings.HasPrefix(mnt, dir+"/") {
			out = append(out, mnt)
		}
	}
	return out
}

// unescapeMountField undoes /proc/mounts' octal escapes (\040 for a space).
func unescapeMountField(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
