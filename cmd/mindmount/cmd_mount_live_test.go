package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMindmountAt: the mountinfo line of a mindmount FUSE mount at the
// mountpoint names its repository; another file system, another
// mountpoint, or a later mount over it does not.
func TestMindmountAt(t *testing.T) {
	const fuse = "50 26 0:45 / /home/ada/mnt rw,nosuid,nodev,relatime - fuse.mindmount /home/ada/memory rw,user_id=0,group_id=0\n"
	cases := []struct {
		name, info, mnt, repo string
		ok                    bool
	}{
		{"mindmount", fuse, "/home/ada/mnt", "/home/ada/memory", true},
		{"another mountpoint", fuse, "/home/ada/mn", "", false},
		{"another file system", "51 26 0:46 / /home/ada/mnt rw - tmpfs tmpfs rw\n", "/home/ada/mnt", "", false},
		{"a tmpfs mounted over it", fuse + "52 50 0:47 / /home/ada/mnt rw - tmpfs tmpfs rw\n", "/home/ada/mnt", "", false},
		{"a space in the path", `53 26 0:48 / /home/ada/my\040mnt rw - fuse.mindmount /home/ada/memory rw` + "\n", "/home/ada/my mnt", "/home/ada/memory", true},
		{"optional fields", "54 26 0:49 / /m rw shared:3 master:1 - fuse.mindmount /r rw\n", "/m", "/r", true},
		{"short lines", "1 2\n - \n", "/m", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			repo, ok := mindmountAt([]byte(tc.info), tc.mnt)
			if repo != tc.repo || ok != tc.ok {
				t.Errorf("got %q %v, want %q %v", repo, ok, tc.repo, tc.ok)
			}
		})
	}
}

// FuzzMindmountAt: any mountinfo text is read without a panic, and a
// repository is reported only with ok.
func FuzzMindmountAt(f *testing.F) {
	f.Add("50 26 0:45 / /m rw - fuse.mindmount /r rw\n", "/m")
	f.Add(" - \n - - -", " ")
	f.Fuzz(func(t *testing.T, info, mnt string) {
		if repo, ok := mindmountAt([]byte(info), mnt); !ok && repo != "" {
			t.Fatalf("repo %q without ok", repo)
		}
	})
}

// TestSecondMountOnALiveMount: a mount on a mountpoint a running mindmount
// serves is refused with advice that keeps that daemon alive (use the
// mount, or stop its daemon), never "fusermount3 -u MNT"; the first mount
// still answers after. The same repository, or another, alike.
func TestSecondMountOnALiveMount(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			t.Skip("not root and no fusermount3")
		}
	}
	repo := filepath.Join(t.TempDir(), "memory")
	other := filepath.Join(t.TempDir(), "other")
	runCmd(t, "init", repo)
	runCmd(t, "init", other)
	mnt := t.TempDir()
	cmd, logs := startMindmount(t, noModel, "mindmount: mounted "+repo+" at "+mnt, "mount", repo, mnt)
	defer stopMindmount(t, cmd, logs)
	for _, r := range []string{repo, other} {
		var out, errOut bytes.Buffer
		if code := run([]string{"mount", r, mnt}, &out, &errOut); code == 0 {
			t.Fatalf("a second mount of %s on %s started", r, mnt)
		}
		msg := errOut.String()
		if !strings.Contains(msg, "already mounted by a running mindmount (serving "+repo+")") || strings.Contains(msg, "fusermount3 -u "+mnt) {
			t.Errorf("second mount of %s: %q", r, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(mnt, "CONTEXT.md")); err != nil {
		t.Fatalf("the first mount stopped answering: %v", err)
	}
}
