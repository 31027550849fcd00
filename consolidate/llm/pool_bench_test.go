package llm

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowModel answers every call after a fixed delay, as a hosted model's
// latency would.
type slowModel struct {
	name  string
	delay time.Duration
}

func (m slowModel) Name() string  { return m.name }
func (m slowModel) Model() string { return "slow" }
func (m slowModel) Chat(ctx context.Context, _ ChatRequest) (string, error) {
	select {
	case <-time.After(m.delay):
		return "ok", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
func (m slowModel) Embed(context.Context, []string) ([][]float32, error) { return nil, nil }
func (m slowModel) Stream(ctx context.Context, _ []Message, on func(string) error) error {
	if _, err := m.Chat(ctx, ChatRequest{}); err != nil {
		return err
	}
	return on("ok")
}

// BenchmarkPoolThroughput: 8 clients chat for 2 s with a model answering
// in 250 ms, through the pool as it was (2 calls at once for every
// provider) and with the hosted provider's default; req/s of each, and a
// consolidation backlog running beside them in the second case. Run with:
//
//	go test -run '^$' -bench PoolThroughput -benchtime 1x ./consolidate/llm
func BenchmarkPoolThroughput(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  PoolConfig
		bg   bool
	}{
		{"before-2-shared", PoolConfig{Concurrency: 2}, false},
		{"default-openai", PoolConfig{}, false},
		{"default-openai-while-consolidating", PoolConfig{}, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			pl := NewPool(slowModel{"openai", 250 * time.Millisecond}, c.cfg)
			for range b.N {
				b.ReportMetric(poolRun(pl, 8, 2*time.Second, c.bg), "req/s")
			}
		})
	}
}

// poolRun has clients chat through pl for d (and, with bg, one user's
// consolidation backlog of 20 calls queued beside them) and returns the
// chats answered per second.
func poolRun(pl *Pool, clients int, d time.Duration, bg bool) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var n atomic.Int64
	var wg sync.WaitGroup
	if bg {
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pl.Background("dreamer").Chat(ctx, ChatRequest{})
			}()
		}
	}
	start := time.Now()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := pl.For(fmt.Sprint("client", i))
			for ctx.Err() == nil {
				if p.Stream(ctx, nil, func(string) error { return nil }) == nil {
					n.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return float64(n.Load()) / time.Since(start).Seconds()
}
