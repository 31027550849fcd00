package tracker

import (
	"bytes"
	"os"
	"path"
	"path/filepath"

	"github.com/engram-dev/engram/memgraph"
)

// synthesizedFiles are written as real files in watch mode. They are
// git-ignored by the template, and Touch never looks at them, so our own
// writes are not mistaken for changes.
var synthesizedFiles = []string{
	memgraph.UserIndexFile,
	memgraph.CharIndexFile,
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
		case memgraph.ContextFile:
			data = t.g.Context(memgraph.ContextOptions{})
		case memgraph.StatusFile:
			data = t.Status()
		}
		abs := filepath.Join(t.root, filepath.FromSlash(rel))
		old, ok := t.synth[rel]
		if !ok {
			old, _ = os.ReadFile(abs)
		}
		if old != nil && bytes.Equal(old, data) {
			t.synth[rel] = data
			continue
		}
		if !t.warnedIgn[rel] && !t.r.Ignored(rel) {
			t.warnedIgn[rel] = true
			t.log.Warn("synthesized file is not git-ignored; add it to .gitignore (it is never committed)", "path", rel)
		}
		if err := writeAtomic(abs, data); err != nil {
			t.log.Warn("cannot write synthesized file", "path", rel, "err", err)
			continue
		}
		t.synth[rel] = data
	}
}

// writeAtomic replaces abs through a temp file (matched by IsTemp, so the
// watcher ignores it) and a rename, so a reader never sees half a file.
func writeAtomic(abs string, data []byte) error {
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+path.Base(filepath.ToSlash(abs))+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, abs)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
