package tracker

// WithoutPacking runs fn while no background pack runs or starts: git fsck
// run beside "git repack -d" can see a pack whose index was just replaced.
func (t *Tracker) WithoutPacking(fn func()) {
	t.packMu.Lock()
	defer t.packMu.Unlock()
	fn()
}

// Claim makes t the repository's one writer, as Recover and Run do first.
func (t *Tracker) Claim() error { return t.claim() }
