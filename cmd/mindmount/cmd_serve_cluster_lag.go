package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"time"

	"github.com/mindmount/mindmount/serve/cluster"
)

// lagSettle is how long after its last write a user stays watched even
// when its worker says everything is pushed: a chat's memory may be
// committed a moment after its answer.
const lagSettle = 10 * time.Second

// wrote notes that a write to id ended on this node: its replication is
// watched (watchLag) until the git host has every commit.
func (c *clusterRouter) wrote(id string) { c.dirty.Store(id, time.Now()) }

// marking wraps id's local handler: a request that may write (any method
// but GET and HEAD) marks the user for the replication watch.
func (c *clusterRouter) marking(h http.Handler, id string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			c.wrote(id)
		}
	})
}

// watchLag asks the worker of every user written lately how far its
// repository is ahead of the git host, every period until ctx ends, and
// records it in the node's replication figures.
func (c *clusterRouter) watchLag(ctx context.Context, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c.dirty.Range(func(k, v any) bool {
			c.checkLag(ctx, k.(string), v.(time.Time))
			return ctx.Err() == nil
		})
	}
}

// checkLag reads id's sync state from its worker here (skipped while a
// hand-over holds the user's gate) and records it; a user pushed and
// quiet for lagSettle, or no longer held, stops being watched.
func (c *clusterRouter) checkLag(ctx context.Context, id string, last time.Time) {
	if !c.node.MayWrite(id) {
		c.rep.Set(id, true, time.Time{})
		c.dirty.CompareAndDelete(id, last)
		return
	}
	g := c.gate(id)
	if !g.rw.TryRLock() {
		return
	}
	defer g.rw.RUnlock()
	h, release, err := c.ws.Forward(ctx, id)
	if err != nil {
		return
	}
	st, ok := workerSyncState(h, id)
	release()
	if !ok {
		return
	}
	pushed := st.Ahead == 0
	c.rep.Set(id, pushed, st.OldestUnpushed)
	if pushed && time.Since(last) > lagSettle {
		c.dirty.CompareAndDelete(id, last)
	}
}

// syncState is what the lag needs of the worker's GET /v1/git/status.
type syncState struct {
	Ahead          int       `json:"ahead"`
	OldestUnpushed time.Time `json:"oldest_unpushed"` // zero when null
}

// workerSyncState asks id's worker for its repository's sync state.
func workerSyncState(h http.Handler, id string) (syncState, bool) {
	req := httptest.NewRequest("GET", "/v1/git/status?detail=sync&userId="+url.QueryEscape(id), nil)
	req.Header.Set("X-Mindmount-User", id)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var st syncState
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &st) != nil {
		return syncState{}, false
	}
	return st, true
}

// lagColumn is cluster status's replication column for one node.
func lagColumn(l *cluster.Lag) string {
	if l == nil {
		return "-"
	}
	if l.UnpushedUsers == 0 {
		return "pushed"
	}
	return time.Duration(l.WorstLagSeconds*float64(time.Second)).Truncate(time.Millisecond).String() + fmt.Sprintf(" (%d users)", l.UnpushedUsers)
}
