package fs

import (
	"sync"
	"time"
)

// ownWindow is how long after a change through the mount fsnotify's report
// of it is taken for our own: the report arrives within milliseconds.
const ownWindow = 2 * time.Second

// ownWrites remembers the paths changed through the mount a moment ago, so
// that fsnotify's echo of them does not make the invalidator drop caches
// the kernel keeps correct by itself (that doubled the cost of creating
// files). An edit beside the mount to the very same path within the window
// is still caught, a debounce later, by the commit's invalidation.
type ownWrites struct {
	mu    sync.Mutex
	at    map[string]time.Time
	sweep time.Time
}

func (o *ownWrites) mark(rel string) {
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.at == nil {
		o.at = map[string]time.Time{}
	}
	o.at[rel] = now
	if now.Sub(o.sweep) > ownWindow {
		o.sweep = now
		for p, t := range o.at {
			if now.Sub(t) > ownWindow {
				delete(o.at, p)
			}
		}
	}
}

// recent reports whether rel was changed through the mount within the
// window.
func (o *ownWrites) recent(rel string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	t, ok := o.at[rel]
	return ok && time.Since(t) <= ownWindow
}
