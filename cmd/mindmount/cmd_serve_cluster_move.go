package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	gosync "sync"
	"time"

	"github.com/mindmount/mindmount/serve/cluster"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/httpapi"
)

// moveWait bounds one hand-over (flush, push, transfer) asked for by
// mindmount cluster move, and one take of a user handed to this node.
const moveWait = 60 * time.Second

// flushOut makes id's repository on this node whole on the git host:
// the worker stops (committing what is pending), starts again and syncs
// (fetch, memory merge, push: fast-forward only), then stops. The caller
// holds id's gate alone, so no request writes meanwhile.
func (c *clusterRouter) flushOut(ctx context.Context, id string) error {
	c.ws.Unload(ctx, id)
	h, release, err := c.ws.Forward(ctx, id)
	if err != nil {
		return err
	}
	code := askWorker(h, "POST", "/v1/git/update", id)
	release()
	c.ws.Unload(ctx, id)
	if code != http.StatusOK {
		return fmt.Errorf("the sync before the hand-over failed (status %d)", code)
	}
	return nil
}

// handOver gives id, held here, to node to: in-flight requests end, new
// ones wait, the repository is flushed and pushed, and the user's key is
// moved to to's lease in one transaction. A failed flush keeps the user
// here (nothing is lost; the move can be asked again).
func (c *clusterRouter) handOver(ctx context.Context, id, to string) error {
	unlock, ok := c.gate(id).lockWithin(ctx)
	if !ok {
		return fmt.Errorf("the requests in flight did not end: %w", ctx.Err())
	}
	defer unlock()
	if !c.node.MayWrite(id) {
		return fmt.Errorf("%w: %s", cluster.ErrNotHeld, id)
	}
	if err := c.flushOut(ctx, id); err != nil {
		return err
	}
	return c.node.Transfer(ctx, id, to)
}

// moveAsked is the node's OnMove: mindmount cluster move asks for id on
// node to. A hand-over that fails (the push did not go through) is tried
// again for as long as the move is asked for (moveWait at most).
func (c *clusterRouter) moveAsked(id, to string) {
	<-c.ready
	if _, busy := c.moving.LoadOrStore(id, struct{}{}); busy {
		return
	}
	defer c.moving.Delete(id)
	ctx, cancel := context.WithTimeout(context.Background(), moveWait)
	defer cancel()
	for {
		err := c.handOver(ctx, id, to)
		if err == nil {
			c.log.Info("cluster: user handed over", "user", id, "to", to)
			return
		}
		if errors.Is(err, cluster.ErrNotHeld) || errors.Is(err, cluster.ErrNoNode) || ctx.Err() != nil {
			c.log.Warn("cluster: moving a user failed; it stays here", "user", id, "to", to, "err", err)
			return
		}
		c.log.Warn("cluster: moving a user: trying again", "user", id, "to", to, "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// given is the node's OnGiven: another node handed id over to this one;
// take it now (worker, sync) rather than on its next request.
func (c *clusterRouter) given(id string) {
	<-c.ready
	if c.leaving.Load() {
		return
	}
	if _, err := c.ws.Lookup(id); err != nil {
		c.log.Warn("cluster: a user handed to this node is unknown here", "user", id)
		return
	}
	g := c.gate(id)
	g.rw.RLock()
	defer g.rw.RUnlock()
	if c.node.MayWrite(id) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), moveWait)
	defer cancel()
	if _, err := c.node.Acquire(ctx, id); err != nil {
		c.log.Warn("cluster: taking a user handed to this node", "user", id, "err", err)
		return
	}
	_, release, err := c.take(ctx, id, g)
	if err == nil {
		release()
		c.log.Info("cluster: took a user handed to this node", "user", id)
	}
}

// leave hands every held user back at SIGTERM: each is flushed and
// pushed (flushOut) and released for the next node, all within ctx. A
// user whose push fails is released all the same: its commits stay on
// this disk and are merged when this node takes it again.
func (c *clusterRouter) leave(ctx context.Context) {
	c.leaving.Store(true)
	var wg gosync.WaitGroup
	for _, id := range c.node.Held() {
		wg.Go(func() {
			if unlock, ok := c.gate(id).lockWithin(ctx); ok {
				defer unlock()
			}
			if err := c.flushOut(ctx, id); err != nil && !errors.Is(err, context.Canceled) {
				c.log.Warn("cluster: leaving: a user's push failed", "user", id, "err", err)
			}
			c.node.Release(ctx, id)
		})
	}
	wg.Wait()
	c.node.Close(ctx)
}

// lockWithin takes the gate alone, giving up when ctx ends (the lock,
// when it comes later, is then given back at once).
func (g *userGate) lockWithin(ctx context.Context) (unlock func(), ok bool) {
	got := make(chan struct{})
	go func() {
		g.rw.Lock()
		close(got)
	}()
	select {
	case <-got:
		return g.rw.Unlock, true
	case <-ctx.Done():
		go func() {
			<-got
			g.rw.Unlock()
		}()
		return nil, false
	}
}

// health is /health's "cluster" field.
func (c *clusterRouter) health() any { return c.node.Health() }

// frontForwarder is what the HTTP front forwards through: the workers,
// or in a cluster the router (which authenticates its hops with key),
// and /health's cluster field then.
func frontForwarder(ws *host.Workers, key string) (httpapi.Forwarder, func() any) {
	if clusterForward == nil {
		return ws, nil
	}
	clusterForward.key = key
	return clusterForward, clusterForward.health
}
