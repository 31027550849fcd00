package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/cluster/clustertest"
)

// takeAll has n take every user, retrying while another still holds
// them (at most a minute), and returns the grants.
func takeAll(t *testing.T, n *Node, users []string) []Grant {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	var grants []Grant
	for _, u := range users {
		for {
			g, err := n.Acquire(ctx, u)
			if err == nil {
				grants = append(grants, g)
				break
			}
			if !errors.Is(err, ErrOwnedElsewhere) || time.Now().After(deadline) {
				t.Fatalf("%s taking %s: %v", n.cfg.Name, u, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return grants
}

// checkHandOver asserts one writer per user at every instant: the old
// node's fence fell before each of the new node's grants was sent.
func checkHandOver(t *testing.T, old *Node, oldGrants []Grant, fellAt time.Time, newGrants []Grant) {
	t.Helper()
	if fellAt.IsZero() {
		t.Fatal("the old node's fence never fell")
	}
	var log []interval
	for _, g := range oldGrants {
		log = append(log, interval{g.Node, g.User, g.At, fellAt})
		if old.MayWrite(g.User) {
			t.Fatalf("%s may still write %s", old.cfg.Name, g.User)
		}
	}
	for _, g := range newGrants {
		log = append(log, interval{g.Node, g.User, g.At, time.Time{}})
	}
	if err := overlap(log); err != nil {
		t.Fatal(err)
	}
	t.Logf("fence fell %v before the first new grant", newGrants[0].At.Sub(fellAt))
}

func users(n int) []string {
	var us []string
	for i := range n {
		us = append(us, fmt.Sprintf("user%d", i))
	}
	return us
}

// TestCutOffNodeStopsWritingBeforeTheTakeOver: a node whose connection
// to etcd is cut (its keep-alives fail) drops its fence, and is told
// which users to stop, before the other node is granted them.
func TestCutOffNodeStopsWritingBeforeTheTakeOver(t *testing.T) {
	url := clustertest.StartEtcd(t)
	relay := clustertest.NewRelay(t, strings.TrimPrefix(url, "http://"))
	var mu sync.Mutex
	var lost []string
	lostDone := make(chan struct{})
	a := join(t, clustertest.Client(t, relay.URL()), "a", func(us []string) {
		mu.Lock()
		lost = us
		mu.Unlock()
		close(lostDone)
	})
	b := join(t, clustertest.Client(t, url), "b", nil)
	us := users(5)
	aGrants := takeAll(t, a, us)
	f := a.currentFence()
	relay.Cut()
	bGrants := takeAll(t, b, us)
	select {
	case <-f.fallen():
	case <-time.After(60 * time.Second):
		t.Fatal("a's fence never fell")
	}
	checkHandOver(t, a, aGrants, f.fellAt(), bGrants)
	<-lostDone
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lost)
	if !slices.Equal(lost, us) {
		t.Fatalf("a was told to stop %v, want %v", lost, us)
	}
}

// TestCrashedNodesUsersAreTakenAfterTheTTL: a node that stops without
// letting go (its client closed, no revoke) keeps its users until its
// lease ends, then another takes them.
func TestCrashedNodesUsersAreTakenAfterTheTTL(t *testing.T) {
	url := clustertest.StartEtcd(t)
	ac := clustertest.Client(t, url)
	a := join(t, ac, "a", nil)
	b := join(t, clustertest.Client(t, url), "b", nil)
	us := users(3)
	aGrants := takeAll(t, a, us)
	f := a.currentFence()
	if _, err := b.Acquire(context.Background(), us[0]); !errors.Is(err, ErrOwnedElsewhere) {
		t.Fatalf("b took a live node's user: %v", err)
	}
	ac.Close()
	bGrants := takeAll(t, b, us)
	<-f.fallen()
	checkHandOver(t, a, aGrants, f.fellAt(), bGrants)
}
