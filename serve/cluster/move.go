package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A move is asked for by the key movesPrefix+user holding a Move: the
// user's owner flushes, pushes and hands the user over to Move.To in one
// transaction (Transfer); the key lives on a short lease of its own, so a
// move nobody carries out is forgotten.
const movesPrefix = "/mindmount/moves/"

// clusterPrefix holds every key of a cluster (the cache's watch).
const clusterPrefix = "/mindmount/"

// Move is a hand-over asked for.
type Move struct {
	To string `json:"to"`
}

var (
	// ErrNotHeld: this node does not hold the user (any more).
	ErrNotHeld = errors.New("this node does not hold the user")
	// ErrNoNode: no live node has that name.
	ErrNoNode = errors.New("no live node has that name")
)

// startCache starts the watch that keeps n.cache, and the moves' and
// hand-overs' callbacks it drives.
func (n *Node) startCache() {
	n.cache = newOwnerCache(n.cfg.Client, n.cfg.Logger)
	n.cache.onEvent = n.event
	ctx, stop := context.WithCancel(context.Background())
	n.stopCache, n.cacheDone = stop, make(chan struct{})
	go func() {
		defer close(n.cacheDone)
		lagDone := make(chan struct{})
		go func() {
			defer close(lagDone)
			n.publishLag(ctx, n.cfg.LagEvery)
		}()
		n.cache.run(ctx)
		<-lagDone
	}()
}

// event is one key's change as the watch saw it (kv nil: deleted).
func (n *Node) event(key string, kv *mvccpb.KeyValue) {
	if kv == nil {
		return
	}
	switch {
	case strings.HasPrefix(key, movesPrefix):
		var mv Move
		user := strings.TrimPrefix(key, movesPrefix)
		if json.Unmarshal(kv.Value, &mv) != nil || mv.To == n.cfg.Name || n.cfg.OnMove == nil || !n.holds(user) {
			return
		}
		go n.cfg.OnMove(user, mv.To)
	case strings.HasPrefix(key, usersPrefix):
		user := strings.TrimPrefix(key, usersPrefix)
		if n.cfg.OnGiven == nil || !n.givenLease(kv.Lease, user) {
			return
		}
		go n.cfg.OnGiven(user)
	}
}

// holds reports whether user is in this term's held users.
func (n *Node) holds(user string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.term == nil {
		return false
	}
	_, ok := n.term.owned[user]
	return ok
}

// givenLease reports whether a user's key on lease is this term's but
// the term does not hold the user: another node handed it over.
func (n *Node) givenLease(lease int64, user string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.term == nil || int64(n.term.session.Lease()) != lease {
		return false
	}
	_, ok := n.term.owned[user]
	return !ok && n.term.taking[user] == 0
}

// Transfer hands user, held here and already flushed and pushed by the
// caller, over to live node to in one transaction: the user's key is put
// on to's lease only while it is still on this node's, so at no instant
// is the user free for a third node nor held by two. This node stops
// holding it first (MayWrite is false from the call on). A transfer that
// cannot be made releases the user instead.
func (n *Node) Transfer(ctx context.Context, user, to string) error {
	t, held := n.stopHolding(user)
	if !held {
		return fmt.Errorf("%w: %s", ErrNotHeld, user)
	}
	defer n.letGo(t, user)
	nk, uk := nodesPrefix+to, usersPrefix+user
	nresp, err := n.cfg.Client.Get(ctx, nk)
	if err != nil || len(nresp.Kvs) == 0 || to == n.cfg.Name {
		n.deleteKey(ctx, t, user)
		return errors.Join(fmt.Errorf("%w: %s", ErrNoNode, to), err)
	}
	lease := nresp.Kvs[0].Lease
	claim, _ := json.Marshal(Claim{Node: to, Since: n.cfg.Now().UTC()})
	resp, err := n.cfg.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.LeaseValue(uk), "=", t.session.Lease()),
			clientv3.Compare(clientv3.LeaseValue(nk), "=", lease)).
		Then(clientv3.OpPut(uk, string(claim), clientv3.WithLease(clientv3.LeaseID(lease)))).Commit()
	if err == nil && !resp.Succeeded {
		err = fmt.Errorf("%w: %s (or %s left)", ErrNotHeld, user, to)
	}
	if err != nil {
		n.deleteKey(ctx, t, user)
		return fmt.Errorf("etcd: %w", err)
	}
	return nil
}

// deleteKey deletes user's key if it is still on t's lease.
func (n *Node) deleteKey(ctx context.Context, t *term, user string) {
	uk := usersPrefix + user
	n.cfg.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.LeaseValue(uk), "=", t.session.Lease())).
		Then(clientv3.OpDelete(uk)).Commit()
}

// AskMove asks the cluster to move user to node to and waits (within
// ctx) until to holds it: a user nobody holds is put on to's lease at
// once; a held one is handed over by its owner. The request is forgotten
// after moveTTL whatever happens.
func AskMove(ctx context.Context, c *clientv3.Client, user, to string) error {
	if err := errors.Join(CheckName(user), CheckName(to)); err != nil {
		return err
	}
	nk, uk, mk := nodesPrefix+to, usersPrefix+user, movesPrefix+user
	nresp, err := c.Get(ctx, nk)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	if len(nresp.Kvs) == 0 {
		return fmt.Errorf("%w: %s", ErrNoNode, to)
	}
	lease := nresp.Kvs[0].Lease
	claim, _ := json.Marshal(Claim{Node: to, Since: time.Now().UTC()})
	if _, err := c.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(uk), "=", 0),
			clientv3.Compare(clientv3.LeaseValue(nk), "=", lease)).
		Then(clientv3.OpPut(uk, string(claim), clientv3.WithLease(clientv3.LeaseID(lease)))).Commit(); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	ml, err := c.Grant(ctx, int64(moveTTL/time.Second))
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer c.Revoke(context.WithoutCancel(ctx), ml.ID)
	mv, _ := json.Marshal(Move{To: to})
	if _, err := c.Put(ctx, mk, string(mv), clientv3.WithLease(ml.ID)); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	for {
		resp, err := c.Get(ctx, uk)
		if err != nil {
			return fmt.Errorf("etcd: %w", err)
		}
		if len(resp.Kvs) > 0 && resp.Kvs[0].Lease == lease {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("moving %s to %s: %w", user, to, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// moveTTL bounds how long a move request stays asked for.
const moveTTL = 60 * time.Second
