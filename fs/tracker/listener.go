package tracker

import (
	"strings"
	"sync"
)

// Listener is how the tracker tells the rest of a runtime what happened:
// one value, given in Config. Every field may be nil. The functions run on
// the tracker's goroutines: keep them cheap, and never call a writing
// method of the tracker from Changed (it runs with the writer's queue
// held; see the lock order in the package doc).
type Listener struct {
	// Changed hears the paths whose state changed after every commit,
	// HEAD reload or newly reported invalid file; the synthesized views
	// (indexes, CONTEXT.md, .mindmount/status) may have changed on every
	// call. The mount drops its kernel caches, MCP tells subscribed
	// clients, the consolidator counts new transcript lines, sync pushes.
	Changed func(paths []string)
	// Observed hears, at once and before any debounce, every path
	// fsnotify reports changed in the backing tree: the mount drops its
	// kernel caches for an edit made beside it without waiting for the
	// commit.
	Observed func(rel string)
	// Control hears that ControlFile was written in the watched tree
	// (watch mode's way to ask for a consolidation).
	Control func()
	// Status adds lines (consolidation's and sync's state) to Status.
	Status func() string
}

// Listeners fans one tracker's Listener out to the parts of a runtime that
// are made after the tracker (the mount, MCP, sync, the consolidator): the
// composition root gives the tracker Listener() and adds each part as it
// is made. Status joins the parts' lines in the order they were added,
// each part ending its last line.
// Safe for concurrent use.
type Listeners struct {
	mu sync.Mutex
	ls []Listener
}

// Add adds l.
func (f *Listeners) Add(l Listener) {
	f.mu.Lock()
	f.ls = append(f.ls, l)
	f.mu.Unlock()
}

func (f *Listeners) all() []Listener {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ls
}

// Listener is the one Listener that tells every part added.
func (f *Listeners) Listener() Listener {
	return Listener{
		Changed: func(paths []string) {
			for _, l := range f.all() {
				if l.Changed != nil {
					l.Changed(append([]string(nil), paths...))
				}
			}
		},
		Observed: func(rel string) {
			for _, l := range f.all() {
				if l.Observed != nil {
					l.Observed(rel)
				}
			}
		},
		Control: func() {
			for _, l := range f.all() {
				if l.Control != nil {
					l.Control()
				}
			}
		},
		Status: func() string {
			var b strings.Builder
			for _, l := range f.all() {
				if l.Status == nil {
					continue
				}
				// A part's last line may lack its newline: the next
				// part still starts on a line of its own.
				if s := l.Status(); s != "" {
					b.WriteString(s)
					if !strings.HasSuffix(s, "\n") {
						b.WriteByte('\n')
					}
				}
			}
			return b.String()
		},
	}
}
