package mount

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/fs/tracker"
)

// A skill is judged by the Agent Skills rules as a memory is by its own: an
// invalid SKILL.md is kept on disk, held back from git and reported in the
// status file; a valid one is committed with its scripts, whose executable
// bit git keeps (mode 100755).
func TestSkillThroughTheMount(t *testing.T) {
	tm := mountRepo(t, newRepo(t, nil), Options{})
	bad := map[string]string{
		"name differs from folder": "---\nname: other\ndescription: d\n---\n",
		"unknown key":              "---\nname: deploy\ndescription: d\nversion: 2\n---\n",
		"metadata not a map":       "---\nname: deploy\ndescription: d\nmetadata: [a]\n---\n",
		"long description":         "---\nname: deploy\ndescription: " + strings.Repeat("d", 1025) + "\n---\n",
	}
	for what, data := range bad {
		tm.write("skills/deploy/SKILL.md", data)
		tm.settle()
		if out := tm.git("ls-files", "skills/deploy/SKILL.md"); out != "" {
			t.Fatalf("%s: invalid skill was committed", what)
		}
		if st := tm.read(".mindmount/status"); !strings.Contains(st, "skills/deploy/SKILL.md") {
			t.Errorf("%s: .mindmount/status does not report the skill:\n%s", what, st)
		}
	}
	tm.write("skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy the app; use when asked to ship.\n---\n# Deploy\n\nRun scripts/run.sh.\n")
	tm.write("skills/deploy/scripts/run.sh", "#!/bin/sh\necho deployed\n")
	if err := os.Chmod(tm.p("skills/deploy/scripts/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	tm.settle()
	if out := tm.git("ls-files", "-s", "skills/deploy/scripts/run.sh"); !strings.HasPrefix(out, "100755 ") {
		t.Errorf("script in git: %q, want mode 100755", out)
	}
	if out := tm.git("ls-files", "skills/deploy/SKILL.md"); out == "" {
		t.Error("valid skill was not committed")
	}
	if st, err := os.Stat(tm.p("skills/deploy/scripts/run.sh")); err != nil || st.Mode().Perm()&0o111 == 0 {
		t.Errorf("script through the mount: %v, %v; want it executable", st.Mode(), err)
	}
	if st := tm.read(".mindmount/status"); strings.Contains(st, "skills/deploy/SKILL.md:") {
		t.Errorf(".mindmount/status still reports the fixed skill:\n%s", st)
	}
	// Reading SKILL.md is a use of the skill, counted under .git: the
	// skill's file and the history stay as they are.
	commits := tm.commits()
	tm.read("skills/deploy/SKILL.md")
	tm.read("skills/deploy/scripts/run.sh")
	if err := tm.g.FlushSkillUses(); err != nil {
		t.Fatal(err)
	}
	if uses := tracker.ReadSkillUses(filepath.Join(tm.dir, ".git")); uses["deploy"] < 1 || len(uses) != 1 {
		t.Errorf("uses after a read: %v", uses)
	}
	if !strings.Contains(tm.read("CONTEXT.md"), "- skills/deploy/SKILL.md — Deploy the app") {
		t.Errorf("CONTEXT.md does not list the skill:\n%s", tm.read("CONTEXT.md"))
	}
	if tm.commits() != commits {
		t.Error("reading a skill made a commit")
	}
	// A file of a skill is size-limited like a memory.
	tm.write("skills/deploy/assets/big.txt", strings.Repeat("x", 65<<10))
	tm.settle()
	if out := tm.git("ls-files", "skills/deploy/assets/big.txt"); out != "" {
		t.Error("a 65 KiB file of a skill was committed")
	}
	if st := tm.read(".mindmount/status"); !strings.Contains(st, "skills/deploy/assets/big.txt") {
		t.Errorf(".mindmount/status does not report the big file:\n%s", st)
	}
	os.Remove(tm.p("skills/deploy/assets/big.txt"))
	tm.settle()
	tm.clean()
}
