package mcpserver

import (
	"strings"
	"testing"
)

const deploySkill = "---\nname: deploy\ndescription: Deploy the app; use when asked to ship.\n---\n# Deploy\n\nRun scripts/run.sh.\n"

func TestSkillsTool(t *testing.T) {
	c := setup(t)
	c.fails("create", map[string]any{"path": "skills/deploy/SKILL.md", "file_text": strings.Replace(deploySkill, "name: deploy", "name: other", 1)}, "must equal the skill's folder name")
	c.ok("create", map[string]any{"path": "skills/deploy/SKILL.md", "file_text": deploySkill})
	if got := c.ok("skills", map[string]any{}); got != "- skills/deploy/SKILL.md — Deploy the app; use when asked to ship. (uses: 0)\n" {
		t.Errorf("skills list: %q", got)
	}
	if got := c.ok("skills", map[string]any{"name": "deploy"}); got != deploySkill {
		t.Errorf("skills read: %q", got)
	}
	c.fails("skills", map[string]any{"name": "../user"}, "is not a skill name")
	c.fails("skills", map[string]any{"name": "nope"}, "no skill nope")
	if got := c.ok("context", map[string]any{}); !strings.Contains(got, "## Skills") || !strings.Contains(got, "- skills/deploy/SKILL.md — Deploy the app") {
		t.Errorf("context lacks the skill:\n%s", got)
	}
	if err := c.rt.Graph.FlushSkillUses(); err != nil {
		t.Fatal(err)
	}
	if got := c.ok("skills", map[string]any{}); !strings.Contains(got, "(uses: 1)") {
		t.Errorf("a read is not counted: %q", got)
	}
}
