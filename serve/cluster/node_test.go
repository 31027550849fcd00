package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/cluster/clustertest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

const testTTL = 2 * time.Second

func join(t *testing.T, c *clientv3.Client, name string, lost func([]string)) *Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	n, err := Join(ctx, Config{Client: c, Name: name, Advertise: name + ".test:8080", TTL: testTTL, OnLost: lost})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close(context.Background()) })
	return n
}

func TestTwoNodesRaceForOneUserOneWins(t *testing.T) {
	url := clustertest.StartEtcd(t)
	a := join(t, clustertest.Client(t, url), "a", nil)
	b := join(t, clustertest.Client(t, url), "b", nil)
	ctx := context.Background()
	for round := range 20 {
		user := fmt.Sprintf("u%d", round)
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			n := a
			if i%2 == 1 {
				n = b
			}
			wg.Go(func() { _, errs[i] = n.Acquire(ctx, user) })
		}
		wg.Wait()
		owner, err := a.Owner(ctx, user)
		if err != nil {
			t.Fatal(err)
		}
		for i, err := range errs {
			self := "a"
			if i%2 == 1 {
				self = "b"
			}
			var oe *OwnedError
			switch {
			case err == nil && self != owner.Name:
				t.Fatalf("%s: %s was granted to %s although %s owns it", user, user, self, owner.Name)
			case err != nil && (!errors.As(err, &oe) || oe.Owner != owner.Name):
				t.Fatalf("%s: %s's refusal: %v (owner %s)", user, self, err, owner.Name)
			}
		}
		if a.MayWrite(user) == b.MayWrite(user) {
			t.Fatalf("%s: a may write %v, b may write %v", user, a.MayWrite(user), b.MayWrite(user))
		}
		if owner.Advertise != owner.Name+".test:8080" {
			t.Fatalf("owner's address %q", owner.Advertise)
		}
	}
}

func TestReleaseLetsAnotherTakeAtOnce(t *testing.T) {
	url := clustertest.StartEtcd(t)
	a := join(t, clustertest.Client(t, url), "a", nil)
	b := join(t, clustertest.Client(t, url), "b", nil)
	ctx := context.Background()
	if _, err := a.Acquire(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, "alice"); !errors.Is(err, ErrOwnedElsewhere) {
		t.Fatalf("b took a's user: %v", err)
	}
	if err := a.Release(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if a.MayWrite("alice") {
		t.Fatal("a may still write after releasing")
	}
	if _, err := b.Acquire(ctx, "alice"); err != nil {
		t.Fatalf("b could not take a released user: %v", err)
	}
	if _, err := a.Owner(ctx, "nobody"); !errors.Is(err, ErrNoOwner) {
		t.Fatalf("owner of nobody: %v", err)
	}
}

func TestANameIsOneLiveNode(t *testing.T) {
	url := clustertest.StartEtcd(t)
	join(t, clustertest.Client(t, url), "a", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := Join(ctx, Config{Client: clustertest.Client(t, url), Name: "a", TTL: testTTL})
	if !errors.Is(err, ErrNodeTaken) {
		t.Fatalf("a second live node a joined: %v", err)
	}
}

// interval is one node's hold on one user: from its grant's sending to
// the fall of its fence (zero: still holding).
type interval struct {
	node, user string
	from, to   time.Time
}

// overlap finds two holds of one user that share an instant.
func overlap(log []interval) error {
	for i, x := range log {
		for _, y := range log[i+1:] {
			if x.user != y.user {
				continue
			}
			xEnd, yEnd := x.to, y.to
			if (xEnd.IsZero() || y.from.Before(xEnd)) && (yEnd.IsZero() || x.from.Before(yEnd)) {
				return fmt.Errorf("%s held by %s [%v, %v] and %s [%v, %v]", x.user,
					x.node, x.from.Format(time.StampMicro), xEnd.Format(time.StampMicro),
					y.node, y.from.Format(time.StampMicro), yEnd.Format(time.StampMicro))
			}
		}
	}
	return nil
}

func TestOverlap(t *testing.T) {
	t0 := time.Unix(100, 0)
	s := func(d int) time.Time { return t0.Add(time.Duration(d) * time.Second) }
	tests := []struct {
		name string
		log  []interval
		bad  bool
	}{
		{"one", []interval{{"a", "u", s(0), time.Time{}}}, false},
		{"handed over", []interval{{"a", "u", s(0), s(5)}, {"b", "u", s(6), time.Time{}}}, false},
		{"other users", []interval{{"a", "u", s(0), time.Time{}}, {"b", "v", s(1), time.Time{}}}, false},
		{"overlap", []interval{{"a", "u", s(0), s(5)}, {"b", "u", s(4), time.Time{}}}, true},
		{"both open", []interval{{"a", "u", s(0), time.Time{}}, {"b", "u", s(9), time.Time{}}}, true},
	}
	for _, tc := range tests {
		if got := overlap(tc.log) != nil; got != tc.bad {
			t.Errorf("%s: overlap = %v, want %v", tc.name, got, tc.bad)
		}
	}
}
