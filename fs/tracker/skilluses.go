package tracker

import (
	"os"
	"path/filepath"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// saveSkillUses writes the graph's skill use counts (memgraph's JSON) to
// .git/mindmount/skill-uses.json: beside the history, never a commit. The
// graph counts; the tracker, which owns the repository's files, writes.
func (t *Tracker) saveSkillUses(data []byte) error {
	file := filepath.Join(t.r.GitDir(), filepath.FromSlash(memgraph.SkillUsesFile))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(file, data, 0o644)
}
