package tracker

import (
	"bytes"

	"github.com/mindmount/mindmount/memgraph"
)

// synthesizedFiles are written as real files in watch mode. They are
// git-ignored by the template, and Touch never looks at them, so our own
// writes are not mistaken for changes. The full indexes are among them: a
// budgeted index's footer points to FullIndexPath, which must exist in
// watch mode as it does in the mount.
var synthesizedFiles = []string{
	memgraph.UserIndexFile,
	memgraph.CharIndexFile,
	memgraph.FullIndexPath(memgraph.KindUser),
	memgraph.FullIndexPath(memgraph.KindCharacter),
	memgraph.ContextFile,
	memgraph.StatusFile,
}

// writeSynthesized rewrites the synthesized files whose content changed.
// Called with t.work held.
func (t *Tracker) writeSynthesized() {
	for _, rel := range synthesizedFiles {
		var data []byte
		switch rel {
		case memgraph.UserIndexFile:
			data = t.g.Index(memgraph.KindUser)
		case memgraph.CharIndexFile:
			data = t.g.Index(memgraph.KindCharacter)
		case memgraph.FullIndexPath(memgraph.KindUser):
			data = t.g.FullIndex(memgraph.KindUser)
		case memgraph.FullIndexPath(memgraph.KindCharacter):
			data = t.g.FullIndex(memgraph.KindCharacter)
		case memgraph.ContextFile:
			data = t.g.Context(memgraph.ContextOptions{})
		case memgraph.StatusFile:
			data = t.Status()
		}
		old, ok := t.synth[rel]
		if !ok {
			old, _ = t.r.Tree().ReadFile(rel, maxPlainFile)
		}
		if old != nil && bytes.Equal(old, data) {
			t.synth[rel] = data
			continue
		}
		if !t.warnedIgn[rel] && !t.r.Ignored(rel) {
			t.warnedIgn[rel] = true
			t.log.Warn("synthesized file is not git-ignored; add it to .gitignore, or run mindmount init on the repository to add the template's rules (it is never committed)", "path", rel)
		}
		// Symlink-safe: a .mindmount/ replaced by a link is refused, never
		// followed out of the repository.
		if err := t.r.WriteDerived(rel, data); err != nil {
			t.log.Warn("cannot write synthesized file", "path", rel, "err", err)
			continue
		}
		t.synth[rel] = data
	}
}
