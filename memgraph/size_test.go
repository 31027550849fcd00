package memgraph

import (
	"strings"
	"testing"
)

// TestSizeProblemIsParsesRule: the problem SizeProblem gives from a size
// alone is the very problem the parsers give the bytes, for every kind the
// rule covers; one byte under the limit passes; other files are not
// covered.
func TestSizeProblemIsParsesRule(t *testing.T) {
	over := strings.Repeat("x", MaxFileSize+1)
	parsed := map[string]func(rel string) []Problem{
		"memory":     func(rel string) []Problem { _, ps := Parse(rel, []byte(over)); return ps },
		"skill":      func(rel string) []Problem { _, ps := ParseSkill(rel, []byte(over)); return ps },
		"skill part": func(rel string) []Problem { return ValidateSkillPart(rel, []byte(over)) },
		"settings":   func(string) []Problem { _, ps := ParseSettings([]byte(over)); return ps },
	}
	for _, c := range []struct{ kind, rel, msg string }{
		{"memory", "user_memory/a.md", "memory files may be at most 65536 bytes"},
		{"skill", SkillPath("deploy"), "a SKILL.md may be at most 65536 bytes"},
		{"skill part", "skills/deploy/assets/blob", "files of a skill may be at most 65536 bytes"},
		{"settings", SettingsFile, "a settings file holds a few lines"},
	} {
		p, tooBig := SizeProblem(c.rel, int64(len(over)))
		if !tooBig || !strings.Contains(p.Msg, c.msg) {
			t.Errorf("%s: SizeProblem = %v, %v", c.kind, p, tooBig)
		}
		if ps := parsed[c.kind](c.rel); len(ps) == 0 || ps[0] != p {
			t.Errorf("%s: the parser says %v, SizeProblem %v", c.kind, ps, p)
		}
		if _, tooBig := SizeProblem(c.rel, MaxFileSize); tooBig {
			t.Errorf("%s: a file at the limit is refused", c.kind)
		}
		if SizeLimit(c.rel) != MaxFileSize {
			t.Errorf("%s: SizeLimit = %d", c.kind, SizeLimit(c.rel))
		}
	}
	if _, tooBig := SizeProblem("notes/data.bin", 1<<30); tooBig || SizeLimit("notes/data.bin") != 0 {
		t.Error("the size rule covers a file that is not a memory")
	}
}
