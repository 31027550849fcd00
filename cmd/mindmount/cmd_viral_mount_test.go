package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMountRecognisesViral (issue 27): mount, like check, says a
// repository in the reference's layout is one to import, mounts nothing
// and leaves the mountpoint as it was.
func TestMountRecognisesViral(t *testing.T) {
	src := viralRepo(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := run([]string{"mount", src, mnt}, &out, &errb)
	if code == 0 || !strings.Contains(errb.String(), "looks like a viral-git-agent-memory repository: run mindmount import viral "+src) {
		t.Fatalf("mount on the reference's repository: exit %d\n%s%s", code, out.String(), errb.String())
	}
	if mounted(mnt) {
		t.Fatal("something was mounted")
	}
	if ents, _ := os.ReadDir(mnt); len(ents) != 0 {
		t.Fatalf("the mountpoint holds %d entries", len(ents))
	}
	if st := gitOut(t, src, "status", "--porcelain"); st != "" {
		t.Fatalf("the repository changed:\n%s", st)
	}
}
