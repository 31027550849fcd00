package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Status is the cluster as etcd has it: its live nodes and who serves
// whom.
type Status struct {
	Nodes []NodeStatus `json:"nodes"`
	// Orphans are users whose owner announced no node (its key vanished
	// first): they are free once their lease ends.
	Orphans []string `json:"orphans,omitempty"`
}

// NodeStatus is one live node: its users and its lease's time left.
type NodeStatus struct {
	Member
	LeaseTTL int64    `json:"leaseTtlSeconds"` // seconds left, as etcd says
	Users    []string `json:"users"`
	// Lag is the node's replication lag as it last published it (within
	// a second or so; nil before its first report).
	Lag *Lag `json:"replication,omitempty"`
}

// ReadStatus reads the cluster's nodes and owners from etcd.
func ReadStatus(ctx context.Context, c *clientv3.Client) (Status, error) {
	nodes, err := c.Get(ctx, nodesPrefix, clientv3.WithPrefix())
	if err != nil {
		return Status{}, fmt.Errorf("etcd: %w", err)
	}
	users, err := c.Get(ctx, usersPrefix, clientv3.WithPrefix())
	if err != nil {
		return Status{}, fmt.Errorf("etcd: %w", err)
	}
	lags, err := c.Get(ctx, lagPrefix, clientv3.WithPrefix())
	if err != nil {
		return Status{}, fmt.Errorf("etcd: %w", err)
	}
	var st Status
	byName := map[string]*NodeStatus{}
	for _, kv := range nodes.Kvs {
		var m Member
		if json.Unmarshal(kv.Value, &m) != nil {
			continue
		}
		ns := NodeStatus{Member: m, LeaseTTL: -1, Users: []string{}}
		if ttl, err := c.TimeToLive(ctx, clientv3.LeaseID(kv.Lease)); err == nil {
			ns.LeaseTTL = ttl.TTL
		}
		st.Nodes = append(st.Nodes, ns)
	}
	for i := range st.Nodes {
		byName[st.Nodes[i].Name] = &st.Nodes[i]
	}
	for _, kv := range lags.Kvs {
		var l Lag
		if ns, ok := byName[strings.TrimPrefix(string(kv.Key), lagPrefix)]; ok && json.Unmarshal(kv.Value, &l) == nil {
			ns.Lag = &l
		}
	}
	for _, kv := range users.Kvs {
		id := strings.TrimPrefix(string(kv.Key), usersPrefix)
		var claim Claim
		json.Unmarshal(kv.Value, &claim)
		if ns, ok := byName[claim.Node]; ok {
			ns.Users = append(ns.Users, id)
		} else {
			st.Orphans = append(st.Orphans, id)
		}
	}
	sort.Slice(st.Nodes, func(i, j int) bool { return st.Nodes[i].Name < st.Nodes[j].Name })
	for i := range st.Nodes {
		sort.Strings(st.Nodes[i].Users)
	}
	sort.Strings(st.Orphans)
	return st, nil
}

// Health is this node's own view, for serve's /health: no user names.
type Health struct {
	Node      string `json:"node"`
	UsersHeld int    `json:"usersHeld"`
	// Writing: the node's session stands (its fence is up).
	Writing bool `json:"writing"`
	// LeaseAgeSeconds is how long ago the last keep-alive etcd answered
	// was sent (-1: no session); FenceLeftSeconds how long this node may
	// still write without another.
	LeaseAgeSeconds  float64 `json:"leaseAgeSeconds"`
	FenceLeftSeconds float64 `json:"fenceLeftSeconds"`
	LeaseTTLSeconds  float64 `json:"leaseTtlSeconds"`
	// Replication: how many held users have commits the git host lacks,
	// and the age of the oldest such commit.
	Replication Lag `json:"replication"`
}

// Health reports this node's session and how many users it holds.
func (n *Node) Health() Health {
	n.mu.Lock()
	t := n.term
	held := 0
	if t != nil {
		held = len(t.owned)
	}
	n.mu.Unlock()
	h := Health{Node: n.cfg.Name, UsersHeld: held, LeaseAgeSeconds: -1, LeaseTTLSeconds: n.cfg.TTL.Seconds(), Replication: n.Lag()}
	if t == nil {
		return h
	}
	sent, until, up := t.fence.state()
	now := n.cfg.Now()
	h.Writing = up
	h.LeaseAgeSeconds = roundMillis(now.Sub(sent).Seconds())
	if up {
		h.FenceLeftSeconds = roundMillis(until.Sub(now).Seconds())
	}
	return h
}

func roundMillis(s float64) float64 { return float64(int64(s*1000)) / 1000 }
