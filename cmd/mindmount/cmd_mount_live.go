package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// liveMountError is the refusal of a mount on mnt while a running
// mindmount already serves a mount there, or nil when none does. The
// generic "already mounted" advice (fusermount3 -u) would pull the mount
// from under that daemon, so this one says to use it or stop its daemon.
func liveMountError(mnt string) error {
	mnt, err := filepath.Abs(mnt)
	if err != nil {
		return nil
	}
	info, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	repo, ok := mindmountAt(info, mnt)
	if !ok {
		return nil
	}
	return fmt.Errorf("%s is already mounted by a running mindmount (serving %s): use it as it is, or stop that daemon first (Ctrl-C where it runs, or kill -TERM its pid; \"mindmount status %s\" names it) — do not fusermount3 -u it, which pulls the mount from under the daemon", mnt, repo, repo)
}

// mindmountAt reads /proc/self/mountinfo (proc(5): the mount point is the
// fifth field, octal-escaped; after the " - " separator come the file
// system type and the source) and reports the repository a mindmount
// FUSE mount at mnt serves, as its source names it.
func mindmountAt(mountinfo []byte, mnt string) (repo string, ok bool) {
	want := mountEscape(mnt)
	for _, line := range strings.Split(string(mountinfo), "\n") {
		head, tail, found := strings.Cut(line, " - ")
		f, t := strings.Fields(head), strings.Fields(tail)
		if !found || len(f) < 5 || len(t) < 2 || f[4] != want {
			continue
		}
		if t[0] == "fuse.mindmount" {
			repo, ok = t[1], true // a later line at mnt hides an earlier one
		} else {
			repo, ok = "", false
		}
	}
	return repo, ok
}

// mountEscape writes p as /proc/self/mountinfo does: space, tab, newline
// and backslash as octal escapes.
func mountEscape(p string) string {
	return strings.NewReplacer(`\`, `\134`, " ", `\040`, "\t", `\011`, "\n", `\012`).Replace(p)
}
