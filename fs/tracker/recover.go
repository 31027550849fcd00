package tracker

import (
	"context"
	"fmt"

	"github.com/mindmount/mindmount/memgraph"
)

// Recover commits whatever valid change was left uncommitted in the working
// tree (a crash, edits made while mindmount was not running) as one commit
// "mindmount: recover N uncommitted changes" authored by mindmount. Invalid files
// are reported and left alone. Call it once at start, before Run.
func (t *Tracker) Recover(ctx context.Context) error {
	if err := t.claim(); err != nil {
		return err
	}
	batch, err := t.dirty(ctx)
	if err != nil {
		return err
	}
	defer t.working()()
	if len(batch) == 0 {
		if t.cfg.WriteSynthesized {
			t.writeSynthesized()
		}
		return nil
	}
	if why := t.gitBusy(); why != "" {
		// A git command holds the repository: starting must not fail
		// (nor wait on it); the changes stay pending and are committed
		// once it is done.
		t.log.Warn("uncommitted changes wait: "+why, "pending", len(batch))
		t.requeue(batch, nil)
		return nil
	}
	res := t.examine(batch, nil)
	t.applyGraph(res)
	if len(res.retry) > 0 {
		t.requeue(res.retry, nil)
	}
	subject := fmt.Sprintf("mindmount: recover %d uncommitted %s", len(res.entries), memgraph.Plural(len(res.entries), "change", "changes"))
	hash, err := t.commit(res, subject)
	if err != nil {
		return fmt.Errorf("recover uncommitted changes: %w", err)
	}
	if n := len(t.Invalid()); n > 0 {
		t.log.Warn("invalid files left uncommitted; see .mindmount/status", "problems", n)
	}
	t.afterChange(res.touched, hash)
	return nil
}

// Inspect judges the uncommitted changes of the working tree without
// committing anything, so that Status reports them (mindmount status without
// a running daemon).
func (t *Tracker) Inspect(ctx context.Context) error {
	batch, err := t.dirty(ctx)
	if err != nil {
		return err
	}
	t.work.Lock()
	res := t.examine(batch, nil)
	t.work.Unlock()
	t.mu.Lock()
	t.uncommitted = res.entries
	t.mu.Unlock()
	return nil
}

// dirty lists the worktree paths that differ from HEAD and the tracker
// would look at.
func (t *Tracker) dirty(ctx context.Context) (map[string]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	paths, err := t.r.Dirty()
	if err != nil {
		return nil, fmt.Errorf("scan for uncommitted changes: %w", err)
	}
	batch := map[string]string{}
	for _, p := range paths {
		if rel, ok := trackedRel(p); ok && !IsScratch(rel) {
			batch[rel] = recoverIdentity
		}
	}
	return batch, nil
}

// Sweep touches every uncommitted change of the working tree (a full walk,
// like Recover) and commits it with Flush. Watch mode calls it at shutdown:
// events still queued in the kernel when the watcher closes would otherwise
// be lost until the next start.
func (t *Tracker) Sweep(ctx context.Context) error {
	batch, err := t.dirty(ctx)
	if err != nil {
		return err
	}
	for rel := range batch {
		t.Touch(rel, "")
	}
	return t.Flush(ctx)
}
