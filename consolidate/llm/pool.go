package llm

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrBusy means the model queue is full: the caller should come back later
// (the HTTP front answers 429).
var ErrBusy = errors.New("the model queue is full")

// PoolConfig sizes a Pool. Zero fields take the defaults.
type PoolConfig struct {
	Concurrency int // model calls at once (default 2)
	MaxQueue    int // calls waiting in all, beyond which ErrBusy (default 64)
	MaxPerUser  int // calls one user may have waiting (default 8)
}

// Pool is the one bounded queue of model calls a daemon shares between its
// users. At most Concurrency calls run at once; the others wait in one
// queue per user, and a freed slot goes to the users in turn (round
// robin), so a user with a long backlog — a big consolidation — delays
// another user's chat by at most one call per slot, never by the whole
// backlog. Provider-specific behaviour stays in the wrapped provider.
type Pool struct {
	p   Provider
	cfg PoolConfig

	mu     sync.Mutex
	busy   int
	queues map[string][]*waiter // per user, oldest first
	ring   []string             // users with waiters, in turn order
	turn   int                  // index in ring of the next user served
	queued int

	lastAt time.Time // when the last call ended
	lastOK bool      // whether the model answered it
}

type waiter struct {
	user    string
	ready   chan struct{} // closed when the slot is handed over
	granted bool
}

// NewPool wraps p. Stream works when p is a Streamer (all of ours are).
func NewPool(p Provider, cfg PoolConfig) *Pool {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 2
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = 64
	}
	if cfg.MaxPerUser <= 0 {
		cfg.MaxPerUser = 8
	}
	return &Pool{p: p, cfg: cfg, queues: map[string][]*waiter{}}
}

// NewRelayPool wraps p, the remote share of a pool elsewhere (a serve
// worker's calls reach serve's pool through llm.NewRemote): that pool
// bounds and shares the model, so this one is wide enough never to be
// the bound and only lets the calls through.
func NewRelayPool(p Provider) *Pool {
	return NewPool(p, PoolConfig{Concurrency: 64, MaxQueue: 256, MaxPerUser: 256})
}

// For returns the provider user's calls go through.
func (pl *Pool) For(user string) ChatProvider { return &pooled{pl: pl, user: user} }

// Provider returns the wrapped provider.
func (pl *Pool) Provider() Provider { return pl.p }

// PoolStats is what the pool says about itself (health, status).
type PoolStats struct {
	Running, Queued int
	LastCall        time.Time // zero before the first call
	LastOK          bool      // the model answered the last call
}

// Stats returns the pool's current numbers.
func (pl *Pool) Stats() PoolStats {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return PoolStats{Running: pl.busy, Queued: pl.queued, LastCall: pl.lastAt, LastOK: pl.lastOK}
}

// acquire waits for a slot for user. The returned release must be called
// once the call is over, with the call's error.
func (pl *Pool) acquire(ctx context.Context, user string) (func(error), error) {
	pl.mu.Lock()
	if pl.busy < pl.cfg.Concurrency && pl.queued == 0 {
		pl.busy++
		pl.mu.Unlock()
		return pl.release, nil
	}
	if pl.queued >= pl.cfg.MaxQueue || len(pl.queues[user]) >= pl.cfg.MaxPerUser {
		pl.mu.Unlock()
		return nil, ErrBusy
	}
	w := &waiter{user: user, ready: make(chan struct{})}
	if len(pl.queues[user]) == 0 {
		pl.ring = append(pl.ring, user)
	}
	pl.queues[user] = append(pl.queues[user], w)
	pl.queued++
	pl.mu.Unlock()

	select {
	case <-w.ready:
		return pl.release, nil
	case <-ctx.Done():
		pl.mu.Lock()
		if w.granted {
			// The slot came as we gave up: pass it on.
			pl.mu.Unlock()
			pl.release(nil)
			return nil, ctx.Err()
		}
		pl.remove(w)
		pl.mu.Unlock()
		return nil, ctx.Err()
	}
}

// release ends a call and hands its slot to the next user in turn.
func (pl *Pool) release(callErr error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if callErr == nil || !errors.Is(callErr, context.Canceled) {
		// A caller that went away says nothing about the model.
		pl.lastAt, pl.lastOK = time.Now(), callErr == nil
	}
	if len(pl.ring) == 0 {
		pl.busy--
		return
	}
	if pl.turn >= len(pl.ring) {
		pl.turn = 0
	}
	user := pl.ring[pl.turn]
	q := pl.queues[user]
	w := q[0]
	pl.queues[user] = q[1:]
	pl.queued--
	if len(pl.queues[user]) == 0 {
		delete(pl.queues, user)
		pl.ring = append(pl.ring[:pl.turn], pl.ring[pl.turn+1:]...)
	} else {
		pl.turn++
	}
	w.granted = true
	close(w.ready) // the slot passes on: busy is unchanged
}

// remove takes a waiter that gave up out of its queue; pl.mu is held.
func (pl *Pool) remove(w *waiter) {
	q := pl.queues[w.user]
	for i, x := range q {
		if x != w {
			continue
		}
		pl.queues[w.user] = append(q[:i:i], q[i+1:]...)
		pl.queued--
		if len(pl.queues[w.user]) == 0 {
			delete(pl.queues, w.user)
			for j, u := range pl.ring {
				if u == w.user {
					pl.ring = append(pl.ring[:j], pl.ring[j+1:]...)
					if j < pl.turn {
						pl.turn--
					}
					break
				}
			}
		}
		return
	}
}

// pooled is one user's view of the pool.
type pooled struct {
	pl   *Pool
	user string
}

var (
	_ ChatProvider = (*pooled)(nil)
	_ Endpoint     = (*pooled)(nil)
)

func (c *pooled) Name() string  { return c.pl.p.Name() }
func (c *pooled) Model() string { return c.pl.p.Model() }

func (c *pooled) Chat(ctx context.Context, req ChatRequest) (string, error) {
	release, err := c.pl.acquire(ctx, c.user)
	if err != nil {
		return "", err
	}
	out, err := c.pl.p.Chat(ctx, req)
	release(err)
	return out, err
}

func (c *pooled) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	release, err := c.pl.acquire(ctx, c.user)
	if err != nil {
		return nil, err
	}
	out, err := c.pl.p.Embed(ctx, texts)
	release(err)
	return out, err
}

// ErrNoStream means the provider cannot stream chat.
var ErrNoStream = errors.New("the model provider cannot stream chat")

// Stream holds its slot until the answer is complete or abandoned.
func (c *pooled) Stream(ctx context.Context, msgs []Message, onDelta func(string) error) error {
	st, ok := c.pl.p.(Streamer)
	if !ok {
		return ErrNoStream
	}
	release, err := c.pl.acquire(ctx, c.user)
	if err != nil {
		return err
	}
	readerErr := false
	err = st.Stream(ctx, msgs, func(d string) error {
		if err := onDelta(d); err != nil {
			readerErr = true
			return err
		}
		return nil
	})
	if readerErr {
		release(context.Canceled) // the reader left; the model was fine
	} else {
		release(err)
	}
	return err
}

// Endpoint and Ping pass through without a slot: a ping is cheap and must
// answer even when the queue is full.
func (c *pooled) Endpoint() string {
	if e, ok := c.pl.p.(Endpoint); ok {
		return e.Endpoint()
	}
	return c.pl.p.Name()
}

func (c *pooled) Ping(ctx context.Context) error {
	if e, ok := c.pl.p.(Endpoint); ok {
		return e.Ping(ctx)
	}
	return nil
}
