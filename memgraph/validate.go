package memgraph

import "fmt"

// Validate checks data as the new content of path: everything Parse
// reports (size, NUL bytes, UTF-8, frontmatter, required description for
// user_memory/ and character_memory/, status values, access log dates), plus
// the read_only rule against prev, the last committed version (nil when the
// file is new): a change that sets, alters or removes read_only is invalid,
// and so is any change at all to a file that is read_only in prev. A new
// file (prev nil) may not be created with read_only: true. A person who
// means such a change commits it with git directly.
func Validate(path string, data, prev []byte) []Problem {
	if path == SettingsFile {
		_, probs := ParseSettings(data)
		return probs
	}
	if IsSkillPath(path) {
		return validateSkill(path, data) // skill.go: the Agent Skills rules
	}
	m, probs := Parse(path, data)
	if prev == nil {
		if m.Front.ReadOnly {
			probs = append(probs, Problem{Path: path, Line: m.keyLine("read_only"),
				Msg: "a new file cannot be created with read_only: true; remove the key, or commit the file yourself with git if you mean it"})
		}
		return probs
	}
	old, _ := Parse(path, prev)
	switch {
	case old.Front.ReadOnly && string(data) != string(prev):
		probs = append(probs, Problem{Path: path, Line: m.keyLine("read_only"),
			Msg: "file is read_only: true in the last commit, so mindmount will not commit changes to it; undo them with 'git checkout -- " + path + "', or commit them yourself with git if you mean them"})
	case old.hasKey("read_only") != m.hasKey("read_only") || old.Front.ReadOnly != m.Front.ReadOnly:
		probs = append(probs, Problem{Path: path, Line: m.keyLine("read_only"),
			Msg: fmt.Sprintf("read_only cannot be set, changed or removed by a write (last commit: %s)", readOnlyText(old))})
	}
	return probs
}

func readOnlyText(m *Memory) string {
	if !m.hasKey("read_only") {
		return "not set"
	}
	return fmt.Sprintf("read_only: %v", m.Front.ReadOnly)
}

// keyLine returns the file line of a frontmatter key, or 0.
func (m *Memory) keyLine(name string) int {
	for _, k := range m.raw.keys {
		if k.name == name {
			return k.start + 1
		}
	}
	return 0
}
