package harness

import (
	"path"
	"strings"
)

// backupMark is what a backup's name adds to its file's:
// settings.json.mindmount-backup-20261207-141500.
const backupMark = ".mindmount-backup-"

// priorBackup is a backup mindmount already took of f, relative to f's
// tree ("" when none). The first backup holds the file as it was before
// mindmount ever changed it, so later installs and uninstalls take no
// more: one backup per file, not one per run.
func (f *settingsFile) priorBackup() string {
	dir := path.Dir(f.rel)
	ents, err := f.tree.ReadDir(dir)
	if err != nil {
		return ""
	}
	prefix := path.Base(f.rel) + backupMark
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			return path.Join(dir, e.Name())
		}
	}
	return ""
}
