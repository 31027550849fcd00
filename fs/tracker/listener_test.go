package tracker_test

import (
	"slices"
	"testing"

	"github.com/mindmount/mindmount/fs/tracker"
)

// TestListenersFanOut: every part added hears every event, status lines
// join in the order the parts were added, each on lines of its own
// even when a part forgets its last newline, and a part without a function
// for an event is skipped.
func TestListenersFanOut(t *testing.T) {
	var ls tracker.Listeners
	l := ls.Listener() // given to the tracker before the parts exist
	var heard []string
	ls.Add(tracker.Listener{
		Changed:  func(p []string) { heard = append(heard, "a:"+p[0]) },
		Observed: func(rel string) { heard = append(heard, "a~"+rel) },
		Status:   func() string { return "a: 0 unchanged" }, // no newline at its end
	})
	ls.Add(tracker.Listener{}) // a part with nothing to hear
	ls.Add(tracker.Listener{
		Changed: func(p []string) { p[0] = "changed by b"; heard = append(heard, "b:"+p[0]) },
		Control: func() { heard = append(heard, "b!") },
		Status:  func() string { return "b\n" },
	})
	paths := []string{"x.md"}
	l.Changed(paths)
	l.Changed(paths)
	l.Observed("y.md")
	l.Control()
	want := []string{"a:x.md", "b:changed by b", "a:x.md", "b:changed by b", "a~y.md", "b!"}
	if !slices.Equal(heard, want) {
		t.Fatalf("heard %q, want %q", heard, want)
	}
	if paths[0] != "x.md" {
		t.Fatalf("a part changed the tracker's slice: %q", paths)
	}
	if got := l.Status(); got != "a: 0 unchanged\nb\n" {
		t.Fatalf("status %q", got)
	}
}
