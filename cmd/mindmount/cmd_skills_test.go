package main

import (
	"strings"
	"testing"
)

// check judges skills by the Agent Skills rules, the daemon's messages
// with path:line, and size-limits the files of a skill's folder.
func TestCheckSkills(t *testing.T) {
	dir := mgRepo(t, map[string]string{
		"user.md":                     "You talk to Ada.\n",
		"skills/deploy/SKILL.md":      "---\nname: deploy\ndescription: Deploy.\n---\n# Deploy\n",
		"skills/other/SKILL.md":       "---\nname: wrong\ndescription: d\nversion: 1\n---\n",
		"skills/deploy/assets/big.md": strings.Repeat("x", 70<<10),
	})
	out, errOut, code := mgRun("check", dir)
	out += errOut
	for _, want := range []string{
		`skills/other/SKILL.md:2: name "wrong" must equal the skill's folder name "other"`,
		`skills/other/SKILL.md:4: unknown frontmatter key "version" for a skill`,
		"skills/deploy/assets/big.md: file is 71680 bytes; files of a skill may be at most 65536 bytes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	if code == 0 || strings.Contains(out, "skills/deploy/SKILL.md") {
		t.Errorf("exit %d; output:\n%s", code, out)
	}
}
