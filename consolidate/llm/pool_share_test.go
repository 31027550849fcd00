package llm

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// named is a gate model that says it is the named provider.
type named struct {
	*gateModel
	name string
}

func (n named) Name() string { return n.name }

// TestPoolDefaultsFitTheProvider: a local Ollama runs one chat at a time
// (its own OLLAMA_NUM_PARALLEL default), a hosted API eight; each has a
// consolidation share of its own; a configured size wins.
func TestPoolDefaultsFitTheProvider(t *testing.T) {
	for _, c := range []struct {
		provider string
		cfg      PoolConfig
		chat, bg int
	}{
		{"ollama", PoolConfig{}, 1, 1},
		{"openai", PoolConfig{}, 8, 2},
		{"anthropic", PoolConfig{}, 8, 2},
		{"ollama", PoolConfig{Concurrency: 4, Background: 3}, 4, 3},
		{"anthropic", PoolConfig{Concurrency: 2}, 2, 2},
	} {
		pl := NewPool(named{newGateModel(), c.provider}, c.cfg)
		if got := pl.Config(); got.Concurrency != c.chat || got.Background != c.bg {
			t.Errorf("%s %+v: chat %d background %d, want %d %d", c.provider, c.cfg, got.Concurrency, got.Background, c.chat, c.bg)
		}
	}
}

// TestPoolRunsTheProvidersConcurrency: against a hosted provider, eight
// clients' chats all reach the model at once (observed at the model, not
// timed); a ninth waits.
func TestPoolRunsTheProvidersConcurrency(t *testing.T) {
	g := newGateModel()
	pl := NewPool(named{g, "openai"}, PoolConfig{})
	var wg sync.WaitGroup
	for i := range 9 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pl.For(fmt.Sprint("client", i)).Stream(context.Background(), nil, func(string) error { return nil })
		}()
	}
	for range 8 {
		recv(t, "a chat to reach the model", g.startc)
	}
	waitQueued(t, pl, 1)
	if s := pl.Stats(); s.Running != 8 {
		t.Fatalf("running %d, want 8 at once: %+v", s.Running, s)
	}
	close(g.gate)
	recv(t, "the ninth chat to reach the model", g.startc)
	wg.Wait()
}

// TestConsolidationNeverQueuesAChat: with one slot in each share, a
// consolidation running and three more waiting, a chat still reaches the
// model at once; and a chat backlog does not hold consolidation back.
func TestConsolidationNeverQueuesAChat(t *testing.T) {
	g := newGateModel()
	pl := NewPool(g, PoolConfig{Concurrency: 1, Background: 1})
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	var wg sync.WaitGroup
	call := func(p ChatProvider, prompt string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Chat(ctx, ChatRequest{Prompt: prompt})
		}()
	}
	call(pl.Background("alice"), "dream-0")
	recv(t, "the consolidation to start", g.startc)
	for i := 1; i <= 3; i++ {
		call(pl.Background("alice"), fmt.Sprint("dream-", i))
	}
	waitQueued(t, pl, 3)
	call(pl.For("alice"), "chat-0")
	if got := recv(t, "alice's chat to start beside her consolidation", g.startc); got != "chat-0" {
		t.Fatalf("started %q, want chat-0", got)
	}
	call(pl.For("bob"), "chat-1") // the chat share is full now: bob waits there
	waitQueued(t, pl, 4)
	g.gate <- struct{}{} // one call ends; whichever it was, its own share moves on
	recv(t, "the next call to start", g.startc)
	close(g.gate)
	for range 3 {
		recv(t, "the rest to start", g.startc)
	}
	wg.Wait()
	if s := pl.Stats(); s.Running != 0 || s.Queued != 0 {
		t.Fatalf("at rest: %+v", s)
	}
}

// TestRemoteConsolidationTakesItsShare: a worker's consolidation calls
// (Remote.Background) take the daemon pool's consolidation share, so a
// chat through the same socket reaches the model while one runs.
func TestRemoteConsolidationTakesItsShare(t *testing.T) {
	g := newGateModel()
	pl := NewPool(g, PoolConfig{Concurrency: 1, Background: 1})
	r := remotePair(t, pl.For("alice"))
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	done := make(chan error, 2)
	go func() { _, err := r.Background().Chat(ctx, ChatRequest{Prompt: "dream"}); done <- err }()
	if got := recv(t, "the consolidation to start", g.startc); got != "dream" {
		t.Fatalf("started %q", got)
	}
	go func() { done <- r.Stream(ctx, nil, func(string) error { return nil }) }()
	if got := recv(t, "the chat to start beside it", g.startc); got != "stream" {
		t.Fatalf("started %q", got)
	}
	close(g.gate)
	for range 2 {
		if err := recv(t, "a call to end", done); err != nil {
			t.Fatal(err)
		}
	}
}
