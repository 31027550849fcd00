package tracker

import "context"

// Exclusive commits what is pending, then runs fn while no flush, recovery
// or HEAD reload runs, then reloads HEAD: fn may move HEAD (sync's merge
// commit writes files and commits through gitrepo.Repo.Merge) and the
// graph and the subscribers hear of it as of any other HEAD move. Writes
// keep landing on disk meanwhile; they are committed after fn returns.
func (t *Tracker) Exclusive(ctx context.Context, fn func() error) error {
	if err := t.Flush(ctx); err != nil {
		return err
	}
	defer t.working()()
	err := fn()
	t.syncHeadLocked()
	return err
}

// AddExtraStatus appends fn's lines to the status text, after whatever
// SetExtraStatus or an earlier AddExtraStatus installed.
func (t *Tracker) AddExtraStatus(fn func() string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	prev := t.extra
	t.extra = func() string {
		s := ""
		if prev != nil {
			s = prev()
		}
		return s + fn()
	}
}
