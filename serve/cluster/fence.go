package cluster

import (
	"sync"
	"time"
)

// fence is the time until which a node may write: each successful
// keep-alive sent at t moves it to t + ttl - guard. The server renews the
// lease when it receives the keep-alive, after t, so the lease outlives
// the fence by at least guard: the time the node has to stop its workers.
// Once fallen, a fence stays down.
type fence struct {
	guard time.Duration
	now   func() time.Time

	mu     sync.Mutex
	until  time.Time
	sentAt time.Time // the last renewal's sending
	down   bool
	downAt time.Time
	fell   chan struct{}
	timer  *time.Timer
}

func newFence(guard time.Duration, now func() time.Time) *fence {
	return &fence{guard: guard, now: now, fell: make(chan struct{})}
}

// renewed records a keep-alive (or the grant) sent at sentAt that the
// server answered with ttl.
func (f *fence) renewed(sentAt time.Time, ttl time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return
	}
	until := sentAt.Add(ttl - f.guard)
	if until.Before(f.until) {
		return
	}
	f.until, f.sentAt = until, sentAt
	wait := until.Sub(f.now())
	if f.timer == nil {
		f.timer = time.AfterFunc(wait, f.check)
		return
	}
	f.timer.Reset(wait)
}

// check drops the fence when its time has passed (the timer's callback).
func (f *fence) check() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.down && !f.now().Before(f.until) {
		f.dropLocked()
	}
}

// drop takes the fence down at once (the session ended).
func (f *fence) drop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dropLocked()
}

func (f *fence) dropLocked() {
	if f.down {
		return
	}
	f.down = true
	f.downAt = f.now()
	if f.timer != nil {
		f.timer.Stop()
	}
	close(f.fell)
}

// up reports whether writes are still allowed; it drops the fence when
// its time has passed even if the timer has not fired yet.
func (f *fence) up() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.down && !f.now().Before(f.until) {
		f.dropLocked()
	}
	return !f.down
}

// fallen is closed when the fence falls.
func (f *fence) fallen() <-chan struct{} { return f.fell }

// fellAt is when the fence fell (zero while up).
func (f *fence) fellAt() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.downAt
}

// state is when the last renewal was sent and whether the fence stands.
func (f *fence) state() (sentAt, until time.Time, up bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sentAt, f.until, !f.down && f.now().Before(f.until)
}
