package tracker

import (
	"bytes"
	"errors"
	"io/fs"
	"path"

	"github.com/mindmount/mindmount/fs/gitrepo"
)

// SyncHead reloads the graph when HEAD moved without us: a git pull, a git
// revert or a commit made with the git CLI in the backing repository, or a
// consolidation committed through the same gitrepo.Repo. The paths that
// differ between the old and the new HEAD are re-read from disk and the
// subscribers are told. Our own commits are recognised by their hash.
func (t *Tracker) SyncHead() {
	defer t.working()()
	t.syncHeadLocked()
}

// ignoreReloader is implemented by gitrepo.Repo when it caches .gitignore
// rules; a HEAD that changed a .gitignore asks it to read them again.
type ignoreReloader interface{ ReloadIgnores() }

// syncHeadLocked does SyncHead's work; t.work is held.
func (t *Tracker) syncHeadLocked() {
	h, err := t.r.Head()
	if err != nil || h == "" || h == t.head {
		return
	}
	old := t.head
	t.setHead(h)
	t.headReloads.Add(1)
	t.packSoon() // consolidation and git commands write objects too
	changed, err := t.r.Changed(old, h)
	if err != nil {
		t.log.Warn("HEAD moved but its changes cannot be listed", "from", gitrepo.ShortHash(old), "to", gitrepo.ShortHash(h), "err", err)
		return
	}
	t.log.Info("HEAD moved beside the tracker (a consolidation, a sync merge or a git command); reloading", "from", gitrepo.ShortHash(old), "to", gitrepo.ShortHash(h), "paths", len(changed))
	ignores := false
	var touched []string
	for _, rel := range changed {
		if path.Base(rel) == ".gitignore" {
			ignores = true
		}
		touched = append(touched, rel)
		tree := t.r.Tree()
		t.refreshPath(rel)
		// A file we held back that is now committed as it is on disk
		// (git add && git commit by hand) is no longer ours to report;
		// the graph reports it if it is still invalid.
		t.mu.Lock()
		_, held := t.invalid[rel]
		t.mu.Unlock()
		if held {
			data, tooLarge, derr := readBounded(tree, rel)
			prev, ok, herr := t.r.ReadHead(rel)
			gone := errors.Is(derr, fs.ErrNotExist) && herr == nil && !ok
			if gone || (derr == nil && tooLarge == 0 && herr == nil && ok && bytes.Equal(data, prev)) {
				t.mu.Lock()
				delete(t.invalid, rel)
				t.mu.Unlock()
			}
		}
	}
	if ignores {
		if rl, ok := any(t.r).(ignoreReloader); ok {
			rl.ReloadIgnores()
		}
	}
	t.notify(touched)
	if t.cfg.WriteSynthesized {
		t.writeSynthesized()
	}
}
