package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/mindmount/mindmount/serve/cluster"
	"github.com/mindmount/mindmount/serve/host"
	"github.com/mindmount/mindmount/serve/httpapi"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// clusterOptions are serve's flags for running as one node of several.
type clusterOptions struct {
	endpoints string // --cluster: etcd's client URL(s), comma-separated
	node      string
	advertise string
	ttl       time.Duration
	syncRep   bool
}

func (o *clusterOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.endpoints, "cluster", "", "join the cluster whose etcd is at `URL` (comma-separated for several): each user is served by one node at a time")
	fl.StringVar(&o.node, "node", "", "this node's `NAME` in the cluster (default: the host name)")
	fl.StringVar(&o.advertise, "advertise", "", "`HOST:PORT` where the other nodes reach this node's --http (default: the --http address)")
	fl.DurationVar(&o.ttl, "cluster-ttl", 10*time.Second, "the node's etcd lease: a node that dies loses its users after this long")
	fl.BoolVar(&o.syncRep, "sync-replication", false, "answer a write (any request but GET and HEAD) only once the user's memory is pushed to its git remote: nothing acknowledged is lost when a node dies")
}

// errMisrouted: a request for a user this node cannot take, which it
// cannot pass on either (no owner known, or the owner is this node).
var errMisrouted = errors.New("the user moved to another node while the request was routed; retry")

// clusterRouter is the HTTP front's Forwarder in a cluster: a user this
// node holds (or takes now) goes to its worker here; one held by another
// node is passed once to that node's front.
type clusterRouter struct {
	ws   *host.Workers
	node *cluster.Node
	key  string // the admin key every node shares: the hop's credential
	log  *slog.Logger
	// syncRep: a write is answered only once the user's repository is
	// pushed (--sync-replication).
	syncRep bool
	mu      gosync.Mutex
	hops    map[string]*httputil.ReverseProxy
	gates   map[string]*userGate
	// leaving: SIGTERM came; users are handed back, none taken.
	leaving atomic.Bool
	moving  gosync.Map    // user -> struct{}: a hand-over under way
	ready   chan struct{} // closed once node is set (the callbacks wait)
	// rep is the node's replication figures; dirty the users written
	// lately (user -> time of the last write), watched until pushed.
	rep   *cluster.Replication
	dirty gosync.Map
	// cli is the node's etcd client; mount is --mount's folder ("" for
	// none): POST /v1/cluster/mount moves a user's mount here.
	cli   *clientv3.Client
	mount string
}

// userGate is one user's door on this node: every request holds it
// shared from routing to its end; a hand-over holds it alone (in-flight
// requests end first, new ones wait, then are routed anew).
type userGate struct {
	rw   gosync.RWMutex
	repl replica
}

// clusterForward is serve's router when --cluster is set (the HTTP front
// forwards through it instead of straight to the workers).
var clusterForward *clusterRouter

var _ httpapi.Forwarder = (*clusterRouter)(nil)

// gate is id's door (made on first use; ids are known users only).
func (c *clusterRouter) gate(id string) *userGate {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gates == nil {
		c.gates = map[string]*userGate{}
	}
	g, ok := c.gates[id]
	if !ok {
		g = &userGate{}
		c.gates[id] = g
	}
	return g
}

// Forward is the one hook of a cluster into serve's front.
func (c *clusterRouter) Forward(ctx context.Context, id string) (http.Handler, func(), error) {
	if _, err := c.ws.Lookup(id); err != nil {
		return nil, nil, err // unknown here: not worth a lease
	}
	g := c.gate(id)
	g.rw.RLock()
	h, release, err := c.route(ctx, id, g)
	if err != nil {
		g.rw.RUnlock()
		return nil, nil, err
	}
	var once gosync.Once
	return h, func() {
		once.Do(func() {
			release()
			g.rw.RUnlock()
		})
	}, nil
}

// route picks where id's request goes: this node's worker (held, or
// taken now), or the owner's front as the watch of etcd says, without a
// round trip; only a user the cache says nobody holds costs a
// transaction.
func (c *clusterRouter) route(ctx context.Context, id string, g *userGate) (http.Handler, func(), error) {
	if c.node.MayWrite(id) {
		return c.local(ctx, id, g)
	}
	if c.leaving.Load() {
		return c.toOwner(ctx, id, g)
	}
	if !httpapi.Forwarded(ctx) {
		if m, free, ok := c.node.CachedOwner(id); ok && !free && m.Name != c.node.Self().Name {
			return c.hopTo(m, id, g), func() {}, nil
		}
	}
	_, err := c.node.Acquire(ctx, id)
	if err == nil {
		return c.take(ctx, id, g)
	}
	if !errors.Is(err, cluster.ErrOwnedElsewhere) && !errors.Is(err, cluster.ErrNotHeld) {
		return nil, nil, err
	}
	return c.toOwner(ctx, id, g)
}

// local is id's worker here, behind the replication wait when asked for.
func (c *clusterRouter) local(ctx context.Context, id string, g *userGate) (http.Handler, func(), error) {
	h, release, err := c.ws.Forward(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if c.syncRep {
		h = c.replicated(h, id, &g.repl)
	}
	return c.marking(h, id), release, nil
}

// toOwner passes the request to the node holding id as etcd says now,
// unless it came from another node already: then the sender is told
// (misrouted) and asks etcd itself.
func (c *clusterRouter) toOwner(ctx context.Context, id string, g *userGate) (http.Handler, func(), error) {
	if httpapi.Forwarded(ctx) {
		return misrouted, func() {}, nil
	}
	owner, err := c.node.Owner(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if owner.Name == c.node.Self().Name || owner.Advertise == "" {
		return nil, nil, errMisrouted
	}
	return c.hopTo(owner, id, g), func() {}, nil
}

// misroutedHeader marks a forwarded request's answer from a node that
// does not hold the user: the sender asks etcd and tries the owner once.
const misroutedHeader = "X-Mindmount-Misrouted"

var misrouted = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set(misroutedHeader, "1")
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	io.WriteString(w, `{"error":"`+errMisrouted.Error()+`"}`)
})

// take starts a user this node was just granted: its worker, then a sync
// with the remote (fetch and merge what the last owner pushed) before the
// first request is answered.
func (c *clusterRouter) take(ctx context.Context, id string, g *userGate) (http.Handler, func(), error) {
	h, release, err := c.local(ctx, id, g)
	if err != nil {
		c.node.Release(context.WithoutCancel(ctx), id)
		return nil, nil, err
	}
	if code := askWorker(h, "POST", "/v1/git/update", id); code != http.StatusOK {
		c.log.Warn("cluster: taking a user: the sync before serving failed; serving what this node has", "user", id, "status", code)
	}
	return h, release, nil
}

// askWorker sends the worker one request of the front's own (no body
// beyond the user) and returns its status.
func askWorker(h http.Handler, method, path, id string) int {
	body := []byte(`{"userId":"` + id + `"}`)
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("X-Mindmount-User", id)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// hop is the reverse proxy to owner's front: the request as the worker
// would get it, with the shared admin key and the hop mark. An answer
// marked misrouted is turned into errStaleOwner for hopTo's retry.
func (c *clusterRouter) hop(owner cluster.Member) http.Handler {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.hops[owner.Advertise]; ok {
		return p
	}
	target := &url.URL{Scheme: "http", Host: owner.Advertise}
	p := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Header.Set(httpapi.ForwardedHeader, c.node.Self().Name)
			if c.key != "" {
				r.Out.Header.Set("Authorization", "Bearer "+c.key)
			}
		},
		FlushInterval: -1, // chat streams
		ModifyResponse: func(resp *http.Response) error {
			if resp.Header.Get(misroutedHeader) != "" {
				resp.Body.Close()
				return errStaleOwner
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if again, ok := r.Context().Value(retryKey{}).(func(http.ResponseWriter)); ok && errors.Is(err, errStaleOwner) {
				again(w)
				return
			}
			c.log.Warn("cluster: forwarding to the owner failed", "owner", owner.Name, "err", err)
			http.Error(w, `{"error":"the node serving this user does not answer; retry"}`, http.StatusServiceUnavailable)
		},
	}
	if c.hops == nil {
		c.hops = map[string]*httputil.ReverseProxy{}
	}
	c.hops[owner.Advertise] = p
	return p
}

// errStaleOwner: the node a request was forwarded to no longer holds
// the user.
var errStaleOwner = errors.New("the node forwarded to does not hold the user")

type retryKey struct{}

// hopTo forwards id's request to first; if first answers that it does
// not hold the user (the cache was stale), the owner is read from etcd
// and the request sent there, once (or served here, when the user came
// to this node meanwhile).
func (c *clusterRouter) hopTo(first cluster.Member, id string, g *userGate) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body) // the front's copy, in memory already
		if err != nil {
			http.Error(w, `{"error":"the request body could not be read"}`, http.StatusBadRequest)
			return
		}
		ctx := r.Context()
		again := func(w http.ResponseWriter) {
			m, err := c.node.Owner(ctx, id)
			r2 := r.Clone(context.WithValue(ctx, retryKey{}, nil))
			r2.Body = io.NopCloser(bytes.NewReader(body))
			switch {
			case err == nil && m.Name == c.node.Self().Name && c.node.MayWrite(id):
				if h, release, err := c.local(ctx, id, g); err == nil {
					defer release()
					h.ServeHTTP(w, r2)
					return
				}
			case err == nil && m.Name != first.Name && m.Name != c.node.Self().Name && m.Advertise != "":
				c.hop(m).ServeHTTP(w, r2)
				return
			}
			misrouted(w, r)
		}
		r1 := r.Clone(context.WithValue(ctx, retryKey{}, again))
		r1.Body = io.NopCloser(bytes.NewReader(body))
		c.hop(first).ServeHTTP(w, r1)
	})
}

// lost stops, at once and without writing, the workers of users this
// node may no longer write (its session's fence fell).
func (c *clusterRouter) lost(users []string) {
	for _, id := range users {
		if err := c.ws.Kill(id); err != nil {
			c.log.Warn("cluster: stopping a lost user's worker", "user", id, "err", err)
		}
	}
	c.log.Warn("cluster: session lost; workers stopped", "users", len(users))
}

// joinCluster connects to etcd and joins as o.node.
func (o *clusterOptions) join(ctx context.Context, log *slog.Logger, r *clusterRouter) (*cluster.Node, *clientv3.Client, error) {
	name := o.node
	if name == "" {
		name, _ = os.Hostname()
	}
	if o.advertise == "" {
		return nil, nil, errors.New("--cluster needs --advertise HOST:PORT: where the other nodes reach this node's --http")
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   strings.Split(o.endpoints, ","),
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("--cluster: %w", err)
	}
	n, err := cluster.Join(ctx, cluster.Config{Client: cli, Name: name, Advertise: o.advertise, TTL: o.ttl, Logger: log,
		OnLost: r.lost, OnMove: r.moveAsked, OnGiven: r.given, Replication: r.rep})
	if err != nil {
		cli.Close()
		return nil, nil, fmt.Errorf("--cluster: %w", err)
	}
	return n, cli, nil
}

// joinCluster makes this serve a node of --cluster (nothing without it)
// and returns what hands its users back at shutdown (flush, push,
// release; within the shutdown grace).
func (o *serveOptions) joinCluster(ctx context.Context, ws *host.Workers, log *slog.Logger) (leave func(), err error) {
	if o.cluster.endpoints == "" {
		return func() {}, nil
	}
	r := &clusterRouter{ws: ws, log: log, syncRep: o.cluster.syncRep, ready: make(chan struct{}), rep: &cluster.Replication{}}
	jctx, cancel := context.WithTimeout(ctx, 2*o.cluster.ttl+10*time.Second)
	defer cancel()
	node, cli, err := o.cluster.join(jctx, log, r)
	if err != nil {
		return nil, err
	}
	r.node, r.cli = node, cli
	if o.mount != "" {
		r.mount, _ = filepath.Abs(o.mount)
	}
	close(r.ready)
	clusterForward = r
	log.Info("joined the cluster", "node", node.Self().Name, "advertise", node.Self().Advertise)
	lagCtx, stopLag := context.WithCancel(context.Background())
	lagDone := make(chan struct{})
	go func() {
		defer close(lagDone)
		r.watchLag(lagCtx, time.Second)
	}()
	return func() {
		stopLag()
		<-lagDone
		lctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		r.leave(lctx)
		cli.Close()
	}, nil
}
