package tracker

// StatusChanged rewrites the synthesized files (watch mode writes them as
// real files) after something the status shows changed without a commit
// or a HEAD move the tracker would hear of: consolidation finished a run,
// failed, or started waiting for a model. Without it the status file of
// watch mode kept the "running" line of a finished run until the next
// write. In mount mode the status is rendered on read: nothing to do.
func (t *Tracker) StatusChanged() {
	if !t.cfg.WriteSynthesized {
		return
	}
	defer t.working()()
	t.writeSynthesized()
}
