package mount

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
)

// TestPreparedSkillScriptExecutableThroughTheMount: a skill's script that
// a prepared change records executable (as consolidation's merge of a
// dream does) is mode 100755 in git and reads back executable, and runs
// as such, through the mount.
func TestPreparedSkillScriptExecutableThroughTheMount(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	defer tm.clean()
	_, err := tm.tr.Apply(context.Background(), tracker.Change{Message: "consolidate: a learned skill", Author: gitrepo.Writer("consolidator"),
		When: time.Now(), Worktree: true, Changes: []gitrepo.Change{
			{Path: "skills/deploy/SKILL.md", Data: []byte("---\nname: deploy\ndescription: Deploy the app.\nmetadata:\n  mindmount-status: draft\n---\n1. Run scripts/run.sh.\n")},
			{Path: "skills/deploy/scripts/run.sh", Data: []byte("#!/bin/sh\necho deployed\n"), Exec: true},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if out := tm.git("ls-tree", "HEAD", "skills/deploy/scripts/run.sh"); !strings.HasPrefix(out, "100755 ") {
		t.Fatalf("ls-tree: %q, want mode 100755", out)
	}
	st, err := os.Stat(tm.p("skills/deploy/scripts/run.sh"))
	if err != nil || st.Mode().Perm()&0o111 == 0 {
		t.Fatalf("through the mount: %v %v; want it executable", st, err)
	}
	if got := tm.read("skills/deploy/scripts/run.sh"); got != "#!/bin/sh\necho deployed\n" {
		t.Fatalf("content through the mount: %q", got)
	}
}
