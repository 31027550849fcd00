package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// lagPrefix holds each node's replication summary, on the node's lease
// (mindmount cluster status reads it).
const lagPrefix = "/mindmount/lag/"

// Replication is how far a node's users' repositories are ahead of the
// git host: per user, whether its last commit is pushed and since when
// the oldest commit the host lacks was made. The serve node fills it
// from its workers' sync state; a user not held is never counted.
type Replication struct {
	mu    sync.Mutex
	users map[string]time.Time // user -> its oldest unpushed commit
}

// Set records user's state: pushed, or the time of its oldest commit
// the git host lacks.
func (r *Replication) Set(user string, pushed bool, oldest time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.users == nil {
		r.users = map[string]time.Time{}
	}
	if pushed {
		delete(r.users, user)
		return
	}
	r.users[user] = oldest
}

// Lag is a node's replication lag, for /health and cluster status: no
// user names.
type Lag struct {
	// UnpushedUsers is how many held users have commits the git host
	// lacks; WorstLagSeconds is the age of the oldest such commit (0
	// when every held user is pushed).
	UnpushedUsers   int     `json:"unpushedUsers"`
	WorstLagSeconds float64 `json:"worstLagSeconds"`
}

// Summary is the lag at now over the users held says this node holds.
func (r *Replication) Summary(now time.Time, held func(string) bool) Lag {
	r.mu.Lock()
	defer r.mu.Unlock()
	var l Lag
	for u, oldest := range r.users {
		if !held(u) {
			continue
		}
		l.UnpushedUsers++
		l.WorstLagSeconds = max(l.WorstLagSeconds, roundMillis(max(now.Sub(oldest), 0).Seconds()))
	}
	return l
}

// Lag is this node's replication lag now.
func (n *Node) Lag() Lag {
	return n.cfg.Replication.Summary(n.cfg.Now(), n.holds)
}

// PublishLag puts this node's lag under its lease for cluster status
// (a node whose lease ends takes its figure with it).
func (n *Node) PublishLag(ctx context.Context) error {
	n.mu.Lock()
	t := n.term
	n.mu.Unlock()
	if t == nil {
		return ErrFenced
	}
	b, _ := json.Marshal(n.Lag())
	if _, err := n.cfg.Client.Put(ctx, lagPrefix+n.cfg.Name, string(b), clientv3.WithLease(t.session.Lease())); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	return nil
}

// publishLag publishes the lag every period until ctx ends (changes
// only, and at least every tenth period).
func (n *Node) publishLag(ctx context.Context, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	var last Lag
	quiet := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		l := n.Lag()
		if l == last && quiet < 10 {
			quiet++
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, period)
		if n.PublishLag(pctx) == nil {
			last, quiet = l, 0
		}
		cancel()
	}
}
