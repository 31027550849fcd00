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
	// Concurrency is how many chat calls (a person waits for them) run
	// at once; 0 is DefaultConcurrency of the provider.
	Concurrency int
	// Background is how many consolidation calls run at once, in a share
	// of their own beside the chats', so that a long consolidation never
	// queues a chat; 0 is DefaultBackground of the provider.
	Background int
	MaxQueue   int // calls waiting in all, per share, beyond which ErrBusy (default 64)
	MaxPerUser int // calls one user may have waiting, per share (default 8)
}

// DefaultConcurrency is the chat share a provider takes by default: what
// the model server itself runs at once. A local Ollama runs one request
// per model at a time unless its OLLAMA_NUM_PARALLEL says more (its FAQ,
// "How does Ollama handle concurrent requests?": the default is 1), so
// more calls would only queue there instead of here, where the queue is
// fair; a hosted API (OpenAI, Anthropic) answers many at once, and 8
// clients are not to wait behind 2.
func DefaultConcurrency(provider string) int {
	if provider == "ollama" {
		return 1
	}
	return 8
}

// DefaultBackground is the consolidation share a provider takes by
// default: one call for a local Ollama, two for a hosted API.
func DefaultBackground(provider string) int {
	if provider == "ollama" {
		return 1
	}
	return 2
}

// Pool is the one bounded queue of model calls a daemon shares between its
// users, in two shares: chats (For) and consolidation (Background), each
// with its own slots, so a backlog in one never delays the other. In a
// share at most its number of calls run at once; the others wait in one
// queue per user, and a freed slot goes to the users in turn (round
// robin), so a user with a long backlog delays another user's call by at
// most one call per slot, never by the whole backlog. Provider-specific
// behaviour stays in the wrapped provider.
type Pool struct {
	p        Provider
	cfg      PoolConfig
	chat, bg share
	lastMu   sync.Mutex
	lastAt   time.Time // when the last call ended
	lastOK   bool      // whether the model answered it
}

// share is one of a pool's fair queues with its own slots.
type share struct {
	slots, maxQueue, maxPerUser int

	mu     sync.Mutex
	busy   int
	queues map[string][]*waiter // per user, oldest first
	ring   []string             // users with waiters, in turn order
	turn   int                  // index in ring of the next user served
	queued int
}

type waiter struct {
	user    string
	ready   chan struct{} // closed when the slot is handed over
	granted bool
}

// NewPool wraps p. Stream works when p is a Streamer (all of ours are).
func NewPool(p Provider, cfg PoolConfig) *Pool {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency(p.Name())
	}
	if cfg.Background <= 0 {
		cfg.Background = DefaultBackground(p.Name())
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = 64
	}
	if cfg.MaxPerUser <= 0 {
		cfg.MaxPerUser = 8
	}
	pl := &Pool{p: p, cfg: cfg}
	pl.chat = share{slots: cfg.Concurrency, maxQueue: cfg.MaxQueue, maxPerUser: cfg.MaxPerUser, queues: map[string][]*waiter{}}
	pl.bg = share{slots: cfg.Background, maxQueue: cfg.MaxQueue, maxPerUser: cfg.MaxPerUser, queues: map[string][]*waiter{}}
	return pl
}

// NewRelayPool wraps p, the remote share of a pool elsewhere (a serve
// worker's calls reach serve's pool through llm.NewRemote): that pool
// bounds and shares the model, so this one is wide enough never to be
// the bound and only lets the calls through.
func NewRelayPool(p Provider) *Pool {
	return NewPool(p, PoolConfig{Concurrency: 64, Background: 64, MaxQueue: 256, MaxPerUser: 256})
}

// Config returns the pool's sizes, defaults filled in.
func (pl *Pool) Config() PoolConfig { return pl.cfg }

// For returns the provider user's chat calls go through.
func (pl *Pool) For(user string) ChatProvider { return &pooled{pl: pl, sh: &pl.chat, user: user} }

// Background returns the provider user's consolidation calls go through:
// the pool's other share, which never takes a chat's slot.
func (pl *Pool) Background(user string) ChatProvider {
	return &pooled{pl: pl, sh: &pl.bg, user: user}
}

// Provider returns the wrapped provider.
func (pl *Pool) Provider() Provider { return pl.p }

// PoolStats is what the pool says about itself (health, status).
type PoolStats struct {
	Running, Queued int       // both shares
	LastCall        time.Time // zero before the first call
	LastOK          bool      // the model answered the last call
}

// Stats returns the pool's current numbers.
func (pl *Pool) Stats() PoolStats {
	var st PoolStats
	for _, sh := range []*share{&pl.chat, &pl.bg} {
		sh.mu.Lock()
		st.Running += sh.busy
		st.Queued += sh.queued
		sh.mu.Unlock()
	}
	pl.lastMu.Lock()
	st.LastCall, st.LastOK = pl.lastAt, pl.lastOK
	pl.lastMu.Unlock()
	return st
}

// ended records how a call ended: a caller that went away says nothing
// about the model.
func (pl *Pool) ended(callErr error) {
	if callErr != nil && errors.Is(callErr, context.Canceled) {
		return
	}
	pl.lastMu.Lock()
	pl.lastAt, pl.lastOK = time.Now(), callErr == nil
	pl.lastMu.Unlock()
}

// acquire waits for a slot of sh for user. The returned release must be
// called once the call is over, with the call's error.
func (pl *Pool) acquire(ctx context.Context, sh *share, user string) (func(error), error) {
	release := func(err error) {
		pl.ended(err)
		sh.release()
	}
	sh.mu.Lock()
	if sh.busy < sh.slots && sh.queued == 0 {
		sh.busy++
		sh.mu.Unlock()
		return release, nil
	}
	if sh.queued >= sh.maxQueue || len(sh.queues[user]) >= sh.maxPerUser {
		sh.mu.Unlock()
		return nil, ErrBusy
	}
	w := &waiter{user: user, ready: make(chan struct{})}
	if len(sh.queues[user]) == 0 {
		sh.ring = append(sh.ring, user)
	}
	sh.queues[user] = append(sh.queues[user], w)
	sh.queued++
	sh.mu.Unlock()

	select {
	case <-w.ready:
		return release, nil
	case <-ctx.Done():
		sh.mu.Lock()
		if w.granted {
			// The slot came as we gave up: pass it on.
			sh.mu.Unlock()
			sh.release()
			return nil, ctx.Err()
		}
		sh.remove(w)
		sh.mu.Unlock()
		return nil, ctx.Err()
	}
}

// release ends a call and hands its slot to the next user in turn.
func (sh *share) release() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if len(sh.ring) == 0 {
		sh.busy--
		return
	}
	if sh.turn >= len(sh.ring) {
		sh.turn = 0
	}
	user := sh.ring[sh.turn]
	q := sh.queues[user]
	w := q[0]
	sh.queues[user] = q[1:]
	sh.queued--
	if len(sh.queues[user]) == 0 {
		delete(sh.queues, user)
		sh.ring = append(sh.ring[:sh.turn], sh.ring[sh.turn+1:]...)
	} else {
		sh.turn++
	}
	w.granted = true
	close(w.ready) // the slot passes on: busy is unchanged
}

// remove takes a waiter that gave up out of its queue; sh.mu is held.
func (sh *share) remove(w *waiter) {
	q := sh.queues[w.user]
	for i, x := range q {
		if x != w {
			continue
		}
		sh.queues[w.user] = append(q[:i:i], q[i+1:]...)
		sh.queued--
		if len(sh.queues[w.user]) == 0 {
			delete(sh.queues, w.user)
			for j, u := range sh.ring {
				if u == w.user {
					sh.ring = append(sh.ring[:j], sh.ring[j+1:]...)
					if j < sh.turn {
						sh.turn--
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
	sh   *share
	user string
}

// Background is the same user's consolidation share (ServeRemote hands
// it to a worker's consolidation calls).
func (c *pooled) Background() ChatProvider { return c.pl.Background(c.user) }

var (
	_ ChatProvider = (*pooled)(nil)
	_ Endpoint     = (*pooled)(nil)
)

func (c *pooled) Name() string  { return c.pl.p.Name() }
func (c *pooled) Model() string { return c.pl.p.Model() }

func (c *pooled) Chat(ctx context.Context, req ChatRequest) (string, error) {
	release, err := c.pl.acquire(ctx, c.sh, c.user)
	if err != nil {
		return "", err
	}
	out, err := c.pl.p.Chat(ctx, req)
	release(err)
	return out, err
}

func (c *pooled) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	release, err := c.pl.acquire(ctx, c.sh, c.user)
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
	release, err := c.pl.acquire(ctx, c.sh, c.user)
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
