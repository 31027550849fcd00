package mount

import "github.com/mindmount/mindmount/memgraph"

// skillUser is what counts a skill's use (*memgraph.Graph): in batches,
// under .git, never in the skill's file or the history.
type skillUser interface{ RecordSkillUse(rel string) }

// noteRead counts a read of a skill's SKILL.md from its start as one use
// of the skill. Other files cost one name comparison.
func (n *node) noteRead(off int64) {
	if off != 0 {
		return
	}
	if name, _ := n.EmbeddedInode().Parent(); name != memgraph.SkillFile {
		return
	}
	u, ok := n.m.graph.(skillUser)
	if !ok {
		return
	}
	if rel, ok := n.rel(); ok {
		u.RecordSkillUse(rel)
	}
}
