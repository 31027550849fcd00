package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/cluster/clustertest"
)

func TestReplicationSummary(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	held := func(u string) bool { return u != "gone" }
	cases := []struct {
		name string
		set  func(r *Replication)
		want Lag
	}{
		{"nothing recorded", func(*Replication) {}, Lag{}},
		{"all pushed", func(r *Replication) { r.Set("alice", true, time.Time{}) }, Lag{}},
		{"one behind", func(r *Replication) { r.Set("alice", false, now.Add(-1500*time.Millisecond)) }, Lag{1, 1.5}},
		{"the worst of two", func(r *Replication) {
			r.Set("alice", false, now.Add(-2*time.Second))
			r.Set("bob", false, now.Add(-7*time.Second))
		}, Lag{2, 7}},
		{"pushed since", func(r *Replication) {
			r.Set("alice", false, now.Add(-2*time.Second))
			r.Set("alice", true, time.Time{})
		}, Lag{}},
		{"a user not held is not counted", func(r *Replication) { r.Set("gone", false, now.Add(-time.Hour)) }, Lag{}},
		{"a commit from the future counts as 0 s", func(r *Replication) { r.Set("alice", false, now.Add(time.Minute)) }, Lag{1, 0}},
	}
	for _, c := range cases {
		var r Replication
		c.set(&r)
		if got := r.Summary(now, held); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestLagInHealthAndStatus: a node reports its held users' lag in its
// Health at once and publishes it for ReadStatus; a user it lets go
// leaves the figure.
func TestLagInHealthAndStatus(t *testing.T) {
	url := clustertest.StartEtcd(t)
	c := clustertest.Client(t, url)
	rep := &Replication{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := Join(ctx, Config{Client: c, Name: "a", Advertise: "a.test:8080", TTL: testTTL, Replication: rep, LagEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	takeAll(t, a, []string{"alice", "bob"})
	rep.Set("alice", false, time.Now().Add(-5*time.Second))
	rep.Set("bob", true, time.Time{})
	rep.Set("carol", false, time.Now().Add(-time.Hour)) // not held here
	if h := a.Health(); h.Replication.UnpushedUsers != 1 || h.Replication.WorstLagSeconds < 5 || h.Replication.WorstLagSeconds > 3600 {
		t.Fatalf("health %+v", h.Replication)
	}
	published := func(want int) {
		t.Helper()
		for ctx.Err() == nil {
			st, err := ReadStatus(ctx, c)
			if err == nil && len(st.Nodes) == 1 && st.Nodes[0].Lag != nil && st.Nodes[0].Lag.UnpushedUsers == want {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("cluster status never showed %d unpushed users", want)
	}
	published(1)
	if err := a.Release(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if h := a.Health(); h.Replication != (Lag{}) {
		t.Fatalf("after alice left: %+v", h.Replication)
	}
	published(0)
}
