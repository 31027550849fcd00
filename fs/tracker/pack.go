package tracker

import (
	"context"
	"errors"

	"github.com/mindmount/mindmount/fs/gitrepo"
)

// defaultPackThreshold is how many loose objects (git's estimate) start a
// background pack. A commit writes a blob, the trees on its path and the
// commit, so this is about a hundred commits; in a folder of thousands of
// memories each of them wrote a tree of a few hundred kilobytes.
const defaultPackThreshold = 512

// packLoop packs the repository in the background whenever a commit left
// more loose objects than the threshold, until ctx ends. It never holds
// the commit lock (see gitrepo.Pack): writes and commits go on meanwhile.
// One pack runs at a time; commits made while it runs kick it again.
func (t *Tracker) packLoop(ctx context.Context) {
	threshold := t.cfg.PackThreshold
	if threshold < 0 {
		return
	}
	if threshold == 0 {
		threshold = defaultPackThreshold
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.packKick:
		}
		if t.r.Loose() < threshold {
			continue
		}
		t.log.Debug("packing loose objects", "loose", t.r.Loose())
		t.packMu.Lock()
		err := t.r.Pack(ctx)
		t.packMu.Unlock()
		switch {
		case err == nil:
			t.log.Debug("packed", "loose", t.r.Loose())
		case errors.Is(err, gitrepo.ErrNoGit):
			t.log.Warn("cannot pack the repository: "+err.Error(), "hint", "install git")
			return
		case ctx.Err() != nil:
			return
		default:
			t.log.Warn("background pack failed; retried after a later commit", "err", err)
		}
	}
}

// packSoon tells packLoop that a commit was made.
func (t *Tracker) packSoon() {
	select {
	case t.packKick <- struct{}{}:
	default:
	}
}
