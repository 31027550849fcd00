package memgraph

import (
	"errors"
	"strings"
	"testing"
)

// skillSeed is a valid skill with every key the rules know.
const skillSeed = `---
name: deploy-staging
description: Deploy the web app to staging; use when the user asks to ship or preview a branch.
license: MIT
compatibility: needs git and ssh
allowed-tools: Bash(git:*) Read
disable-model-invocation: false
user-invocable: true
argument-hint: "[branch]"
context: fork
agent: general-purpose
model: sonnet
hooks:
  PreToolUse: []
metadata:
  mindmount-status: active
  mindmount-source: consolidate transcripts/s1.jsonl#1-40
---
# Deploy to staging

1. Run scripts/deploy.sh BRANCH.
`

func skillWith(front string) string { return "---\n" + front + "---\nBody.\n" }

func TestSkillRules(t *testing.T) {
	p := "skills/deploy-staging/SKILL.md"
	cases := []struct {
		name, path, data string
		want             []string // substrings of the problems, in order; nil = valid
	}{
		{"valid", p, skillSeed, nil},
		{"minimal", p, skillWith("name: deploy-staging\ndescription: d\n"), nil},
		{"draft", p, skillWith("name: deploy-staging\ndescription: d\nmetadata:\n  mindmount-status: draft\n"), nil},
		{"allowed-tools as a list", p, skillWith("name: deploy-staging\ndescription: d\nallowed-tools: [Read, Grep]\n"), nil},
		{"name differs from folder", p, skillWith("name: deploy-prod\ndescription: d\n"),
			[]string{`skills/deploy-staging/SKILL.md:2: name "deploy-prod" must equal the skill's folder name "deploy-staging"`}},
		{"65-character name", "skills/" + strings.Repeat("a", 65) + "/SKILL.md", skillWith("name: " + strings.Repeat("a", 65) + "\ndescription: d\n"),
			[]string{":2: name \"" + strings.Repeat("a", 65) + "\" must be at most 64 characters"}},
		{"64-character name", "skills/" + strings.Repeat("a", 64) + "/SKILL.md", skillWith("name: " + strings.Repeat("a", 64) + "\ndescription: d\n"), nil},
		{"upper case", "skills/Deploy/SKILL.md", skillWith("name: Deploy\ndescription: d\n"), []string{`:2: name "Deploy" must be at most 64 characters of lower-case`}},
		{"double dash", "skills/a--b/SKILL.md", skillWith("name: a--b\ndescription: d\n"), []string{":2: name \"a--b\""}},
		{"1,025-character description", p, skillWith("name: deploy-staging\ndescription: " + strings.Repeat("d", 1025) + "\n"),
			[]string{":3: description has 1025 characters; at most 1024 are allowed"}},
		{"1,024-character description", p, skillWith("name: deploy-staging\ndescription: " + strings.Repeat("é", 1024) + "\n"), nil},
		{"empty description", p, skillWith("name: deploy-staging\ndescription: \"\"\n"), []string{":3: description is empty"}},
		{"unknown key", p, skillWith("name: deploy-staging\ndescription: d\nversion: 2\n"),
			[]string{`:4: unknown frontmatter key "version" for a skill; allowed keys are name, description, license, compatibility, metadata, allowed-tools, disable-model-invocation, user-invocable, argument-hint, context, agent, model, hooks`}},
		{"metadata a list", p, skillWith("name: deploy-staging\ndescription: d\nmetadata: [a, b]\n"), []string{":4: metadata must be a map of text keys to text values"}},
		{"metadata nested", p, skillWith("name: deploy-staging\ndescription: d\nmetadata:\n  owner:\n    team: x\n"), []string{":5: metadata must map text to text; \"owner\" is not"}},
		{"bad status", p, skillWith("name: deploy-staging\ndescription: d\nmetadata:\n  mindmount-status: live\n"), []string{":5: mindmount-status must be one of draft, active, retired"}},
		{"bad bool", p, skillWith("name: deploy-staging\ndescription: d\nuser-invocable: sometimes\n"), []string{":4: user-invocable must be true or false"}},
		{"hooks not a map", p, skillWith("name: deploy-staging\ndescription: d\nhooks: x\n"), []string{":4: hooks must be a mapping"}},
		{"no frontmatter", p, "# Deploy\n", []string{":1: a skill starts with frontmatter"}},
		{"missing name and description", p, skillWith("license: MIT\n"), []string{":1: missing name", ":1: missing description"}},
		{"duplicate key", p, skillWith("name: deploy-staging\nname: deploy-staging\ndescription: d\n"), []string{":3: frontmatter key \"name\" appears twice"}},
		{"too big", p, skillWith("name: deploy-staging\ndescription: d\n") + strings.Repeat("x", MaxSkillFileSize), []string{"a SKILL.md may be at most 65536 bytes"}},
		{"script fine", "skills/deploy-staging/scripts/deploy.sh", "#!/bin/sh\necho hi\n", nil},
		{"script too big", "skills/deploy-staging/assets/blob", strings.Repeat("x", MaxSkillFileSize+1), []string{"files of a skill may be at most 65536 bytes"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probs := Validate(c.path, []byte(c.data), nil)
			if len(probs) != len(c.want) {
				t.Fatalf("got %d problems %v, want %d %q", len(probs), probs, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(probs[i].String(), w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, probs[i], w)
				}
				if !errors.Is(probs[i].Err, ErrSkill) {
					t.Errorf("problem %d is not ErrSkill", i)
				}
			}
		})
	}
}

func TestSkillParsed(t *testing.T) {
	s, probs := ParseSkill("skills/deploy-staging/SKILL.md", []byte(skillSeed))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	if s.Name != "deploy-staging" || s.Status != SkillActive || !strings.HasPrefix(s.Source, "consolidate ") ||
		len(s.AllowedTools) != 2 || s.License != "MIT" || !strings.HasPrefix(s.Body, "# Deploy") || s.BodyLine != 19 {
		t.Fatalf("%+v", s)
	}
	m, _ := Parse(s.Path, []byte(skillSeed))
	if KindOf(m.Path) != KindSkill || !m.Active() || m.Front.Description != s.Description || string(m.Render()) != skillSeed {
		t.Fatalf("memory of a skill: %+v", m)
	}
	d, _ := Parse(s.Path, []byte(skillWith("name: deploy-staging\ndescription: d\nmetadata: {mindmount-status: draft}\n")))
	if d.Active() {
		t.Fatal("a draft skill is active")
	}
}

func TestSkillPaths(t *testing.T) {
	for rel, want := range map[string][2]bool{ // IsMemoryPath, IsSkillPath
		"skills/a/SKILL.md":              {true, true},
		"skills/a/references/x.md":       {false, true},
		"skills/a/scripts/run.sh":        {false, true},
		"skills/README.md":               {false, false},
		"skills/a/b/SKILL.md":            {false, true},
		"notes/skills/a/SKILL.md":        {true, false},
		"skills/../user_memory/SKILL.md": {false, false},
	} {
		if IsMemoryPath(rel) != want[0] || IsSkillPath(rel) != want[1] {
			t.Errorf("%s: IsMemoryPath %v IsSkillPath %v, want %v", rel, IsMemoryPath(rel), IsSkillPath(rel), want)
		}
	}
}

func FuzzSkill(f *testing.F) {
	for _, s := range []string{skillSeed, "", "---\n", "---\nname: [\n---\n", "---\nmetadata: {a: {b: c}}\n---\n",
		"---\nname: *a\n---\n", "\xff\x00---\n", "---\r\nname: x\r\n---\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		rel := "skills/x/SKILL.md"
		s, probs := ParseSkill(rel, []byte(in))
		if s == nil {
			t.Fatal("nil skill")
		}
		if len(probs) == 0 && (s.Name != "x" || strings.TrimSpace(s.Description) == "") {
			t.Fatalf("valid skill without name or description: %+v", s)
		}
		m, _ := Parse(rel, []byte(in))
		if string(m.Render()) != in {
			t.Fatalf("Render(Parse(x)) != x for a skill")
		}
	})
}
