package cluster

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// ownerCache mirrors the cluster's keys (nodes, owners, moves) from one
// etcd watch, so that routing a request to another node's user costs no
// etcd round trip. It is only ever a routing hint: a node takes a user by
// its transaction and writes behind its fence, whatever the cache says,
// and a request routed on a stale entry is re-resolved from etcd once.
type ownerCache struct {
	client *clientv3.Client
	log    *slog.Logger
	// onEvent is told each change after it is applied (the moves' watcher).
	onEvent func(key string, kv *mvccpb.KeyValue)

	mu     sync.RWMutex
	synced bool // the maps hold a revision the watch follows
	nodes  map[string]cachedNode
	owners map[string]cachedClaim
}

type cachedNode struct {
	Member
	lease int64
}

type cachedClaim struct {
	Claim
	lease int64
}

func newOwnerCache(c *clientv3.Client, log *slog.Logger) *ownerCache {
	return &ownerCache{client: c, log: log}
}

// run lists the keys and follows them until ctx ends; a broken watch
// (compaction, etcd restarted) lists again after a short pause, the cache
// marked unsynced (every lookup goes to etcd) meanwhile.
func (oc *ownerCache) run(ctx context.Context) {
	for ctx.Err() == nil {
		rev, err := oc.list(ctx)
		if err == nil {
			oc.follow(ctx, rev)
		}
		oc.setSynced(false)
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// list loads every key under the cluster's prefix and returns the
// revision it read at.
func (oc *ownerCache) list(ctx context.Context) (int64, error) {
	resp, err := oc.client.Get(ctx, clusterPrefix, clientv3.WithPrefix())
	if err != nil {
		return 0, err
	}
	oc.mu.Lock()
	oc.nodes, oc.owners = map[string]cachedNode{}, map[string]cachedClaim{}
	for _, kv := range resp.Kvs {
		oc.putLocked(kv)
	}
	oc.synced = true
	oc.mu.Unlock()
	for _, kv := range resp.Kvs {
		if oc.onEvent != nil {
			oc.onEvent(string(kv.Key), kv)
		}
	}
	return resp.Header.Revision, nil
}

// follow applies the watch's events from rev+1 until it breaks.
func (oc *ownerCache) follow(ctx context.Context, rev int64) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	for wr := range oc.client.Watch(wctx, clusterPrefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
		if err := wr.Err(); err != nil {
			oc.log.Debug("cluster: the owners' watch broke; listing again", "err", err)
			return
		}
		for _, ev := range wr.Events {
			oc.mu.Lock()
			if ev.Type == clientv3.EventTypeDelete {
				oc.deleteLocked(string(ev.Kv.Key))
			} else {
				oc.putLocked(ev.Kv)
			}
			oc.mu.Unlock()
			if oc.onEvent != nil {
				var kv *mvccpb.KeyValue
				if ev.Type != clientv3.EventTypeDelete {
					kv = ev.Kv
				}
				oc.onEvent(string(ev.Kv.Key), kv)
			}
		}
	}
}

func (oc *ownerCache) putLocked(kv *mvccpb.KeyValue) {
	key := string(kv.Key)
	switch {
	case strings.HasPrefix(key, nodesPrefix):
		var m Member
		if json.Unmarshal(kv.Value, &m) == nil {
			oc.nodes[strings.TrimPrefix(key, nodesPrefix)] = cachedNode{Member: m, lease: kv.Lease}
		}
	case strings.HasPrefix(key, usersPrefix):
		var c Claim
		if json.Unmarshal(kv.Value, &c) == nil {
			oc.owners[strings.TrimPrefix(key, usersPrefix)] = cachedClaim{Claim: c, lease: kv.Lease}
		}
	}
}

func (oc *ownerCache) deleteLocked(key string) {
	switch {
	case strings.HasPrefix(key, nodesPrefix):
		delete(oc.nodes, strings.TrimPrefix(key, nodesPrefix))
	case strings.HasPrefix(key, usersPrefix):
		delete(oc.owners, strings.TrimPrefix(key, usersPrefix))
	}
}

func (oc *ownerCache) setSynced(v bool) {
	oc.mu.Lock()
	oc.synced = v
	oc.mu.Unlock()
}

// owner is user's owner as the watch last said: ok false when the cache
// is not synced or does not know (then ask etcd). A claim whose node key
// is gone, or whose lease is not that node's, is not trusted either.
func (oc *ownerCache) owner(user string) (m Member, free, ok bool) {
	oc.mu.RLock()
	defer oc.mu.RUnlock()
	if !oc.synced {
		return Member{}, false, false
	}
	c, held := oc.owners[user]
	if !held {
		return Member{}, true, true
	}
	n, live := oc.nodes[c.Node]
	if !live || n.lease != c.lease || n.Advertise == "" {
		return Member{}, false, false
	}
	return n.Member, false, true
}

// nodeLease is the lease of live node name as the cache has it.
func (oc *ownerCache) nodeLease(name string) (int64, bool) {
	oc.mu.RLock()
	defer oc.mu.RUnlock()
	n, ok := oc.nodes[name]
	return n.lease, ok && oc.synced
}
