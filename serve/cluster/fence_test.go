package cluster

import (
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestFenceCountsFromTheSendingMinusTheGuard(t *testing.T) {
	clk := &fakeClock{t: time.Unix(1000, 0)}
	start := clk.now()
	tests := []struct {
		name  string
		steps func(f *fence)
		at    time.Duration // clock offset from start when asked
		up    bool
	}{
		{"fresh grant", func(f *fence) { f.renewed(start, 9*time.Second) }, 5 * time.Second, true},
		{"just before ttl-guard", func(f *fence) { f.renewed(start, 9*time.Second) }, 6*time.Second - time.Nanosecond, true},
		{"at ttl-guard", func(f *fence) { f.renewed(start, 9*time.Second) }, 6 * time.Second, false},
		{"renewed later", func(f *fence) {
			f.renewed(start, 9*time.Second)
			f.renewed(start.Add(4*time.Second), 9*time.Second)
		}, 9 * time.Second, true},
		{"an older renewal never shortens", func(f *fence) {
			f.renewed(start.Add(4*time.Second), 9*time.Second)
			f.renewed(start, 9*time.Second)
		}, 9 * time.Second, true},
		{"dropped", func(f *fence) { f.renewed(start, 9*time.Second); f.drop() }, 0, false},
		{"no renewal after a drop", func(f *fence) {
			f.renewed(start, 9*time.Second)
			f.drop()
			f.renewed(start.Add(time.Second), 9*time.Second)
		}, time.Second, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk.mu.Lock()
			clk.t = start
			clk.mu.Unlock()
			f := newFence(3*time.Second, clk.now)
			tc.steps(f)
			clk.add(tc.at)
			if got := f.up(); got != tc.up {
				t.Fatalf("up at +%v = %v, want %v", tc.at, got, tc.up)
			}
			if !tc.up {
				select {
				case <-f.fallen():
				default:
					t.Fatal("fallen not closed once down")
				}
				if f.fellAt().IsZero() {
					t.Fatal("fellAt not recorded")
				}
			}
		})
	}
}

// TestFenceFallsByItself: with nobody asking, the timer takes it down.
func TestFenceFallsByItself(t *testing.T) {
	f := newFence(0, time.Now)
	f.renewed(time.Now(), 50*time.Millisecond)
	select {
	case <-f.fallen():
	case <-time.After(60 * time.Second):
		t.Fatal("the fence never fell")
	}
}

func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"alice", "a/b", "..", "", "bob@x", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckName(s) != nil {
			return
		}
		for _, r := range s {
			if r == '/' || r < 0x21 || r > 0x7e {
				t.Fatalf("accepted %q", s)
			}
		}
		if s == "." || s == ".." {
			t.Fatalf("accepted %q", s)
		}
	})
}
