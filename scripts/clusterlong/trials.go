package main

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/serve/cluster"
)

// live lists the running nodes, sorted by name, but the paused one.
func (r *rig) live(paused string) []*node {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*node
	for _, n := range r.nodes {
		if n.name != paused {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b *node) int { return strings.Compare(a.name, b.name) })
	return out
}

// owner is user's node as etcd says ("" for none).
func (r *rig) owner(ctx context.Context, user string) string {
	resp, err := r.etcd.Get(ctx, "/mindmount/users/"+user)
	if err != nil || len(resp.Kvs) == 0 {
		return ""
	}
	var c cluster.Claim
	json.Unmarshal(resp.Kvs[0].Value, &c)
	return c.Node
}

// get times one GET /v1/git/status for user at base (ok: 200).
func (st *stats) get(ctx context.Context, hc *http.Client, base, user string) (time.Duration, bool) {
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/v1/git/status?userId="+user, nil)
	t0 := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return 0, false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(t0), resp.StatusCode == 200
}

// sample measures, every 250 ms until stop, one request straight to a
// user's owner and one through another node (one forward hop), and
// every node's worst replication lag (/health).
func (r *rig) sample(ctx context.Context, stop <-chan struct{}, paused *syncString, st *stats) {
	rng := rand.New(rand.NewPCG(7, 39))
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		nodes := r.live(paused.get())
		if i%4 == 0 {
			r.sampleLag(ctx, nodes, st)
		}
		user := r.users[rng.IntN(len(r.users))]
		own := r.owner(ctx, user)
		var to, via *node
		for _, n := range nodes {
			if n.name == own {
				to = n
			} else if via == nil || rng.IntN(2) == 0 {
				via = n
			}
		}
		if to == nil || via == nil {
			continue
		}
		hc := st.client(user, 5*time.Second)
		d, ok1 := st.get(ctx, hc, "http://"+to.addr, user)
		h, ok2 := st.get(ctx, hc, "http://"+via.addr, user)
		if ok1 && ok2 && r.owner(ctx, user) == own {
			st.mu.Lock()
			st.direct, st.hop = append(st.direct, d), append(st.hop, h)
			st.mu.Unlock()
		}
	}
}

func (r *rig) sampleLag(ctx context.Context, nodes []*node, st *stats) {
	hc := &http.Client{Timeout: 2 * time.Second}
	for _, n := range nodes {
		resp, err := hc.Get("http://" + n.addr + "/health")
		if err != nil {
			continue
		}
		var h struct {
			Cluster cluster.Health `json:"cluster"`
		}
		json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		st.mu.Lock()
		st.lag = append(st.lag, h.Cluster.Replication.WorstLagSeconds)
		st.mu.Unlock()
	}
}

// syncString is the paused node's name.
type syncString struct {
	mu sync.Mutex
	s  string
}

func (s *syncString) get() string  { s.mu.Lock(); defer s.mu.Unlock(); return s.s }
func (s *syncString) set(v string) { s.mu.Lock(); s.s = v; s.mu.Unlock() }

// trial pauses one node (serve and its workers) until another node
// serves one of its users, and resumes it.
func (r *rig) trial(ctx context.Context, i int, paused *syncString, st *stats) {
	nodes := r.live("")
	victim := nodes[i%len(nodes)]
	status, err := cluster.ReadStatus(ctx, r.etcd)
	var user string
	for _, ns := range status.Nodes {
		if ns.Name == victim.name && len(ns.Users) > 0 {
			user = ns.Users[i%len(ns.Users)]
		}
	}
	if err != nil || user == "" {
		st.skipped++
		return
	}
	pids := family(victim.cmd.Process.Pid)
	signalAll(pids, syscall.SIGSTOP)
	paused.set(victim.name)
	t0 := time.Now()
	defer func() {
		signalAll(pids, syscall.SIGCONT)
		paused.set("")
		r.settle(ctx, victim)
	}()
	others := r.live(victim.name)
	hc := st.client(user, 3*time.Second)
	for k := 0; time.Since(t0) < 2*time.Minute && ctx.Err() == nil; k++ {
		if _, ok := st.get(ctx, hc, "http://"+others[k%len(others)].addr, user); ok {
			st.mu.Lock()
			st.takeover = append(st.takeover, time.Since(t0))
			st.trials++
			st.mu.Unlock()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	log.Printf("trial %d: nobody served %s within 2 minutes of pausing %s", i, user, victim.name)
}

// settle waits (a minute at most) until the resumed node answers /health.
func (r *rig) settle(ctx context.Context, n *node) {
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if resp, err := hc.Get("http://" + n.addr + "/health"); err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func signalAll(pids []int, sig syscall.Signal) {
	for _, p := range pids {
		syscall.Kill(p, sig)
	}
}
