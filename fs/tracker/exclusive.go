package tracker

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
