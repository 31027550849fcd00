package tracker

import (
	"os"
	"path/filepath"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// maxSkillUses bounds the use counts file read (a damaged or planted big
// file counts from zero).
const maxSkillUses = 1 << 20

// ReadSkillUses returns the skill use counts saved in the git directory
// gitDir (.git/mindmount/skill-uses.json), by skill name; empty when none
// were saved.
func ReadSkillUses(gitDir string) map[string]int {
	p := filepath.Join(gitDir, filepath.FromSlash(memgraph.SkillUsesFile))
	if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() || st.Size() > maxSkillUses {
		return map[string]int{}
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return map[string]int{}
	}
	return memgraph.ParseSkillUses(data)
}

// saveSkillUses writes the graph's skill use counts (memgraph's JSON) to
// .git/mindmount/skill-uses.json: beside the history, never a commit. The
// graph counts; the tracker, which owns the repository's files, reads and
// writes them.
func (t *Tracker) saveSkillUses(data []byte) error {
	file := filepath.Join(t.r.GitDir(), filepath.FromSlash(memgraph.SkillUsesFile))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(file, data, 0o644)
}
