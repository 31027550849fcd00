package llm

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"
)

// gateModel is a provider whose calls block until the test lets each one
// finish, and which records the order calls started in.
type gateModel struct {
	mu      sync.Mutex
	started []string
	startc  chan string
	gate    chan struct{}
	fail    error
}

func newGateModel() *gateModel {
	return &gateModel{startc: make(chan string, 100), gate: make(chan struct{})}
}

func (g *gateModel) Name() string  { return "gate" }
func (g *gateModel) Model() string { return "gate" }
func (g *gateModel) Chat(ctx context.Context, req ChatRequest) (string, error) {
	g.mu.Lock()
	g.started = append(g.started, req.Prompt)
	g.mu.Unlock()
	g.startc <- req.Prompt
	select {
	case <-g.gate:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return "ok", g.fail
}
func (g *gateModel) Embed(context.Context, []string) ([][]float32, error) { return nil, nil }
func (g *gateModel) Stream(ctx context.Context, _ []Message, on func(string) error) error {
	_, err := g.Chat(ctx, ChatRequest{Prompt: "stream"})
	if err != nil {
		return err
	}
	return on("ok")
}

// testDeadline ends a pool test that would otherwise hang (a call the
// pool should have refused waits for a model that never answers); it is
// not a timing assertion.
const testDeadline = 20 * time.Second

// waitQueued spins until the pool holds n waiting calls (no sleeps: the
// queue's length is the handshake), failing the test past testDeadline.
func waitQueued(t *testing.T, pl *Pool, n int) {
	t.Helper()
	for deadline := time.Now().Add(testDeadline); pl.Stats().Queued != n; runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("the pool never held %d waiting calls: %+v", n, pl.Stats())
		}
	}
}

// recv receives from ch, failing the test past testDeadline.
func recv[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testDeadline):
		t.Fatalf("%s: nothing after %s", what, testDeadline)
		panic("unreachable")
	}
}

// TestPoolFairness: with one slot, alice queues a backlog of six calls,
// then bob queues one. Bob's call must run right after alice's next one,
// not after her whole backlog: in the chats' share and in consolidation's.
func TestPoolFairness(t *testing.T) {
	t.Run("chat", func(t *testing.T) { testPoolFairness(t, (*Pool).For) })
	t.Run("background", func(t *testing.T) { testPoolFairness(t, (*Pool).Background) })
}

func testPoolFairness(t *testing.T, shareOf func(*Pool, string) ChatProvider) {
	g := newGateModel()
	pl := NewPool(g, PoolConfig{Concurrency: 1, Background: 1})
	var wg sync.WaitGroup
	call := func(user, prompt string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := shareOf(pl, user).Chat(context.Background(), ChatRequest{Prompt: prompt}); err != nil {
				t.Error(err)
			}
		}()
	}
	call("carol", "carol-0")
	<-g.startc // carol holds the only slot
	for i := 1; i <= 6; i++ {
		call("alice", fmt.Sprintf("alice-%d", i))
		waitQueued(t, pl, i)
	}
	call("bob", "bob-1")
	waitQueued(t, pl, 7)
	for i := 0; i < 8; i++ {
		g.gate <- struct{}{}
		if i < 7 {
			<-g.startc
		}
	}
	wg.Wait()
	order := fmt.Sprint(g.started)
	want := "[carol-0 alice-1 bob-1 alice-2 alice-3 alice-4 alice-5 alice-6]"
	if order != want {
		t.Fatalf("order %s, want %s", order, want)
	}
	if s := pl.Stats(); s.Running != 0 || s.Queued != 0 || !s.LastOK {
		t.Fatalf("stats after %+v", s)
	}
}

// TestPoolLimits: a full queue says ErrBusy at once; one user's backlog
// limit does not stop another user; a waiter that gives up leaves the
// queue and frees nothing it did not hold.
func TestPoolLimits(t *testing.T) {
	g := newGateModel()
	pl := NewPool(g, PoolConfig{Concurrency: 1, MaxQueue: 3, MaxPerUser: 2})
	// Every call ends by the test's deadline: one the pool should have
	// refused, and which waits for the gate instead, fails the test.
	tctx, stop := context.WithTimeout(context.Background(), testDeadline)
	defer stop()
	errs := make(chan error, 10)
	call := func(ctx context.Context, user string) {
		go func() {
			_, err := pl.For(user).Chat(ctx, ChatRequest{Prompt: user})
			errs <- err
		}()
	}
	call(tctx, "alice")
	recv(t, "alice's first call to start", g.startc)
	call(tctx, "alice")
	call(tctx, "alice")
	waitQueued(t, pl, 2)
	if _, err := pl.For("alice").Chat(tctx, ChatRequest{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("alice's third waiting call: %v", err)
	}
	ctx, cancel := context.WithCancel(tctx)
	call(ctx, "bob") // bob still gets in: the per-user limit is alice's
	waitQueued(t, pl, 3)
	if _, err := pl.For("dave").Chat(tctx, ChatRequest{}); !errors.Is(err, ErrBusy) {
		t.Fatalf("full queue: %v", err)
	}
	cancel() // bob gives up
	if err := recv(t, "bob's call", errs); !errors.Is(err, context.Canceled) {
		t.Fatalf("bob: %v", err)
	}
	if s := pl.Stats(); s.Queued != 2 || s.Running != 1 {
		t.Fatalf("after bob left: %+v", s)
	}
	for i := 0; i < 3; i++ {
		select {
		case g.gate <- struct{}{}:
		case <-tctx.Done():
			t.Fatalf("no call waits at the model's gate: %+v", pl.Stats())
		}
		if err := recv(t, "alice's call", errs); err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			recv(t, "alice's next call to start", g.startc)
		}
	}
	if s := pl.Stats(); s.Queued != 0 || s.Running != 0 {
		t.Fatalf("at rest: %+v", s)
	}
}

// TestPoolHealth: the last call's outcome is the model's health, but a
// reader that leaves a stream says nothing about the model.
func TestPoolHealth(t *testing.T) {
	g := newGateModel()
	close(g.gate)
	pl := NewPool(g, PoolConfig{})
	g.fail = errors.New("model down")
	if _, err := pl.For("a").Chat(context.Background(), ChatRequest{}); err == nil {
		t.Fatal("no error")
	}
	if pl.Stats().LastOK {
		t.Fatal("a failed call counts as ok")
	}
	g.fail = nil
	if err := pl.For("a").Stream(context.Background(), nil, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !pl.Stats().LastOK {
		t.Fatal("a good call counts as failed")
	}
	gone := errors.New("gone")
	if err := pl.For("a").Stream(context.Background(), nil, func(string) error { return gone }); !errors.Is(err, gone) {
		t.Fatal(err)
	}
	if !pl.Stats().LastOK {
		t.Fatal("a reader leaving marked the model down")
	}
}
