package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// "git commit" refuses a skill that breaks the Agent Skills rules with the
// daemon's message (memgraph's skill rules through tracker.Judge), and
// takes a valid one with its executable script.
func TestPreCommitJudgesSkills(t *testing.T) {
	mindmountOnPath(t)
	dir := clone(t)
	for _, c := range []struct{ data, want string }{
		{"---\nname: other\ndescription: d\n---\n", `skills/deploy/SKILL.md:2: name "other" must equal the skill's folder name "deploy"`},
		{"---\nname: deploy\ndescription: d\ncolour: red\n---\n", `skills/deploy/SKILL.md:4: unknown frontmatter key "colour" for a skill`},
		{"---\nname: Deploy\ndescription: d\n---\n", `skills/deploy/SKILL.md:2: name "Deploy" must be at most 64 characters`},
	} {
		write(t, dir, "skills/deploy/SKILL.md", c.data)
		mustGit(t, dir, "add", "skills/deploy/SKILL.md")
		out, err := runGit(t, dir, "commit", "-q", "-m", "skill")
		if err == nil || !strings.Contains(out, c.want) {
			t.Fatalf("invalid skill not refused as wanted (err %v):\n%s\nwant %s", err, out, c.want)
		}
	}
	write(t, dir, "skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy the app.\n---\n# Deploy\n")
	write(t, dir, "skills/deploy/scripts/run.sh", "#!/bin/sh\necho ok\n")
	if err := os.Chmod(filepath.Join(dir, "skills/deploy/scripts/run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustGit(t, dir, "add", "skills")
	if out, err := runGit(t, dir, "commit", "-q", "-m", "skill"); err != nil {
		t.Fatalf("valid skill refused: %v\n%s", err, out)
	}
	if out := mustGit(t, dir, "ls-files", "-s", "skills/deploy/scripts/run.sh"); !strings.HasPrefix(out, "100755 ") {
		t.Fatalf("script mode: %q", out)
	}
}
