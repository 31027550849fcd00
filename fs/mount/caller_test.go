package mount

import (
	"testing"
	"time"
)

func TestPidCache(t *testing.T) {
	var c pidCache
	t0 := time.Unix(1000, 0)
	calls := 0
	answer := func(name string, ok bool) func(uint32) (string, bool) {
		return func(uint32) (string, bool) { calls++; return name, ok }
	}
	steps := []struct {
		name  string
		at    time.Time
		find  func(uint32) (string, bool)
		want  string
		calls int // find calls so far
	}{
		{"first ask looks it up", t0, answer("vim", true), "vim", 1},
		{"fresh answer is remembered", t0.Add(callerTTL - 1), answer("sed", true), "vim", 1},
		{"stale answer is looked up again", t0.Add(callerTTL), answer("sed", true), "sed", 2},
		{"a failed lookup answers", t0.Add(3 * callerTTL), answer("", false), "", 3},
		{"and is not remembered", t0.Add(3 * callerTTL), answer("nano", true), "nano", 4},
	}
	for _, s := range steps {
		if got := c.get(42, s.at, s.find); got != s.want || calls != s.calls {
			t.Errorf("%s: got %q after %d lookups, want %q after %d", s.name, got, calls, s.want, s.calls)
		}
	}
	for pid := range uint32(2000) {
		c.put(pid, "x", t0)
	}
	if n := len(c.m); n > 1025 {
		t.Errorf("cache grew to %d entries, want at most 1025", n)
	}
}
