package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
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
}

func (o *clusterOptions) AddFlags(fl *flag.FlagSet) {
	fl.StringVar(&o.endpoints, "cluster", "", "join the cluster whose etcd is at `URL` (comma-separated for several): each user is served by one node at a time")
	fl.StringVar(&o.node, "node", "", "this node's `NAME` in the cluster (default: the host name)")
	fl.StringVar(&o.advertise, "advertise", "", "`HOST:PORT` where the other nodes reach this node's --http (default: the --http address)")
	fl.DurationVar(&o.ttl, "cluster-ttl", 10*time.Second, "the node's etcd lease: a node that dies loses its users after this long")
}

// errMisrouted: a request another node forwarded here for a user this
// node cannot take either (a third node holds it): never forwarded twice.
var errMisrouted = errors.New("the user moved to another node while the request was forwarded; retry")

// clusterRouter is the HTTP front's Forwarder in a cluster: a user this
// node holds (or takes now) goes to its worker here; one held by another
// node is passed once to that node's front.
type clusterRouter struct {
	ws   *host.Workers
	node *cluster.Node
	key  string // the admin key every node shares: the hop's credential
	log  *slog.Logger
	mu   gosync.Mutex
	hops map[string]*httputil.ReverseProxy
	// leaving: SIGTERM came; users are handed back, none taken.
	leaving atomic.Bool
}

// clusterForward is serve's router when --cluster is set (the HTTP front
// forwards through it instead of straight to the workers).
var clusterForward *clusterRouter

var _ httpapi.Forwarder = (*clusterRouter)(nil)

// Forward is the one hook of a cluster into serve's front.
func (c *clusterRouter) Forward(ctx context.Context, id string) (http.Handler, func(), error) {
	if c.node.MayWrite(id) {
		return c.ws.Forward(ctx, id)
	}
	if _, err := c.ws.Lookup(id); err != nil {
		return nil, nil, err // unknown here: not worth a lease
	}
	if c.leaving.Load() {
		return c.toOwner(ctx, id)
	}
	_, err := c.node.Acquire(ctx, id)
	if err == nil {
		return c.take(ctx, id)
	}
	if !errors.Is(err, cluster.ErrOwnedElsewhere) {
		return nil, nil, err
	}
	return c.toOwner(ctx, id)
}

// toOwner passes the request to the node holding id, unless it came
// from another node already.
func (c *clusterRouter) toOwner(ctx context.Context, id string) (http.Handler, func(), error) {
	if httpapi.Forwarded(ctx) {
		return nil, nil, errMisrouted
	}
	owner, err := c.node.Owner(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	if owner.Name == c.node.Self().Name || owner.Advertise == "" {
		return nil, nil, errMisrouted
	}
	return c.hop(owner), func() {}, nil
}

// take starts a user this node was just granted: its worker, then a sync
// with the remote (fetch and merge what the last owner pushed) before the
// first request is answered.
func (c *clusterRouter) take(ctx context.Context, id string) (http.Handler, func(), error) {
	h, release, err := c.ws.Forward(ctx, id)
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
// would get it, with the shared admin key and the hop mark.
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
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
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

// leave hands every held user back: its worker pushes (sync), stops
// committing what is pending, and the user is released for the next
// node, all within ctx.
func (c *clusterRouter) leave(ctx context.Context) {
	c.leaving.Store(true)
	var wg gosync.WaitGroup
	for _, id := range c.node.Held() {
		wg.Go(func() {
			if h, release, err := c.ws.Forward(ctx, id); err == nil {
				askWorker(h, "POST", "/v1/git/update", id)
				release()
			}
			c.ws.Unload(ctx, id)
			c.node.Release(ctx, id)
		})
	}
	wg.Wait()
	c.node.Close(ctx)
}

// joinCluster connects to etcd and joins as o.node.
func (o *clusterOptions) join(ctx context.Context, log *slog.Logger, lost func([]string)) (*cluster.Node, *clientv3.Client, error) {
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
	n, err := cluster.Join(ctx, cluster.Config{Client: cli, Name: name, Advertise: o.advertise, TTL: o.ttl, Logger: log, OnLost: lost})
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
	r := &clusterRouter{ws: ws, log: log}
	jctx, cancel := context.WithTimeout(ctx, 2*o.cluster.ttl+10*time.Second)
	defer cancel()
	node, cli, err := o.cluster.join(jctx, log, r.lost)
	if err != nil {
		return nil, err
	}
	r.node = node
	clusterForward = r
	log.Info("joined the cluster", "node", node.Self().Name, "advertise", node.Self().Advertise)
	return func() {
		lctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		r.leave(lctx)
		cli.Close()
	}, nil
}
