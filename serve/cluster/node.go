package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// Config is one node's place in a cluster.
type Config struct {
	Client    *clientv3.Client
	Name      string // this node's name, unique among live nodes
	Advertise string // host:port where the others reach its HTTP front
	// TTL is the session lease (whole seconds, at least 2 s: etcd's
	// minimum); Guard is how long before the lease could end this node
	// stops writing (default TTL/3).
	TTL, Guard time.Duration
	// OnLost is told, once per lost session and in its own goroutine,
	// the users the node held: stop their workers without writing.
	OnLost func(users []string)
	// OnMove is told, in its own goroutine, that `mindmount cluster move`
	// asks this node to hand user over to node to (flush, push, Transfer).
	OnMove func(user, to string)
	// OnGiven is told, in its own goroutine, that another node handed
	// user over to this one (the user's key is on this node's lease):
	// take it (Acquire, start its worker) before its first request.
	OnGiven func(user string)
	Logger  *slog.Logger
	Now     func() time.Time // the clock, for tests; time.Now by default
	// Replication is where serve records its users' push state; the
	// node reports its lag (Health) and publishes it every LagEvery
	// (default 1 s) for cluster status.
	Replication *Replication
	LagEvery    time.Duration
}

// Node is one serve node's Ownership in etcd. A lost session ends the
// node's hold on every user; the next Acquire starts a new session.
type Node struct {
	cfg   Config
	since time.Time

	cache     *ownerCache
	stopCache context.CancelFunc
	cacheDone chan struct{}

	mu     sync.Mutex
	term   *term
	closed bool
}

var _ Ownership = (*Node)(nil)

// term is one session of a node: its lease, fence and held users.
type term struct {
	session *concurrency.Session
	fence   *fence
	owned   map[string]Grant
	// letting: users being released or handed over; Acquire refuses
	// them until their key is gone or another node's, lest the key still
	// on this lease be read as "ours already" and the user held twice.
	letting map[string]bool
	// taking: Acquires under way, whose own key's watch event is not a
	// hand-over (OnGiven).
	taking map[string]int
	stop   context.CancelFunc
	done   chan struct{}
}

// Join starts node cfg.Name's first session and announces it. A name
// still held by a dead node's lease is waited for, up to twice the TTL.
func Join(ctx context.Context, cfg Config) (*Node, error) {
	if err := CheckName(cfg.Name); err != nil {
		return nil, err
	}
	if cfg.TTL < 2*time.Second {
		cfg.TTL = 2 * time.Second
	}
	cfg.TTL = cfg.TTL.Truncate(time.Second)
	if cfg.Guard <= 0 || cfg.Guard >= cfg.TTL {
		cfg.Guard = cfg.TTL / 3
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Replication == nil {
		cfg.Replication = &Replication{}
	}
	if cfg.LagEvery <= 0 {
		cfg.LagEvery = time.Second
	}
	n := &Node{cfg: cfg, since: cfg.Now()}
	n.startCache()
	wait, cancel := context.WithTimeout(ctx, 2*cfg.TTL+time.Second)
	defer cancel()
	for {
		n.mu.Lock()
		_, err := n.currentLocked(ctx)
		n.mu.Unlock()
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, ErrNodeTaken) {
			n.Close(context.WithoutCancel(ctx))
			return nil, err
		}
		select {
		case <-wait.Done():
			n.Close(context.WithoutCancel(ctx))
			return nil, err
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Self is this node as the others see it.
func (n *Node) Self() Member {
	return Member{Name: n.cfg.Name, Advertise: n.cfg.Advertise, Since: n.since}
}

// currentLocked is the live term, started anew when the last one ended.
func (n *Node) currentLocked(ctx context.Context) (*term, error) {
	if n.closed {
		return nil, ErrFenced
	}
	if n.term != nil {
		return n.term, nil
	}
	t, err := n.startTerm(ctx)
	if err != nil {
		return nil, err
	}
	n.term = t
	return t, nil
}

// startTerm grants a lease (the fence counted from the grant's sending),
// wraps it in a session and registers the node under it.
func (n *Node) startTerm(ctx context.Context) (*term, error) {
	c := n.cfg.Client
	secs := int64(n.cfg.TTL / time.Second)
	sent := n.cfg.Now()
	lease, err := c.Grant(ctx, secs)
	if err != nil {
		return nil, fmt.Errorf("etcd lease: %w", err)
	}
	f := newFence(n.cfg.Guard, n.cfg.Now)
	f.renewed(sent, time.Duration(lease.TTL)*time.Second)
	s, err := concurrency.NewSession(c, concurrency.WithLease(lease.ID), concurrency.WithTTL(int(secs)))
	if err != nil {
		f.drop()
		return nil, fmt.Errorf("etcd session: %w", err)
	}
	self, _ := json.Marshal(n.Self())
	key := nodesPrefix + n.cfg.Name
	resp, err := c.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(self), clientv3.WithLease(lease.ID))).Commit()
	if err == nil && !resp.Succeeded {
		err = fmt.Errorf("%w: %s", ErrNodeTaken, n.cfg.Name)
	}
	if err != nil {
		f.drop()
		s.Close()
		return nil, err
	}
	tctx, stop := context.WithCancel(context.Background())
	t := &term{session: s, fence: f, owned: map[string]Grant{}, letting: map[string]bool{}, taking: map[string]int{}, stop: stop, done: make(chan struct{})}
	go n.keep(tctx, t)
	return t, nil
}

// keep renews t's fence with its own keep-alives (the session keeps the
// lease alive too, but does not say when the server last heard it) and
// ends the term when the fence falls.
func (n *Node) keep(ctx context.Context, t *term) {
	defer close(t.done)
	every := max(n.cfg.TTL/6, 50*time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.fence.fallen():
			n.endTerm(t)
			return
		case <-t.session.Done():
			t.fence.drop()
		case <-tick.C:
			sent := n.cfg.Now()
			kctx, cancel := context.WithTimeout(ctx, every)
			resp, err := n.cfg.Client.KeepAliveOnce(kctx, t.session.Lease())
			cancel()
			switch {
			case err == nil && resp.TTL > 0:
				t.fence.renewed(sent, time.Duration(resp.TTL)*time.Second)
			case errors.Is(err, rpctypes.ErrLeaseNotFound) || (err == nil && resp.TTL <= 0):
				t.fence.drop()
			}
		}
	}
}

// endTerm forgets t's users and tells OnLost; the lease is revoked in
// the background so the others need not wait for its TTL.
func (n *Node) endTerm(t *term) {
	n.mu.Lock()
	users := make([]string, 0, len(t.owned))
	for u := range t.owned {
		users = append(users, u)
	}
	t.owned = map[string]Grant{}
	if n.term == t {
		n.term = nil
	}
	closed := n.closed
	n.mu.Unlock()
	if closed {
		return
	}
	n.cfg.Logger.Warn("cluster session lost: writes stopped", "node", n.cfg.Name, "users", len(users))
	if n.cfg.OnLost != nil && len(users) > 0 {
		go n.cfg.OnLost(users)
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.TTL)
		defer cancel()
		t.session.Orphan()
		n.cfg.Client.Revoke(ctx, t.session.Lease())
	}()
}
