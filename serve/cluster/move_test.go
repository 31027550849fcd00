package cluster

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mindmount/mindmount/serve/cluster/clustertest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// eventually waits (a minute at most: only a hang fails) for ok.
func eventually(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCachedOwnerFollowsEtcd: b's cache learns that a took a user, that
// a let it go, and that a left, from its watch alone.
func TestCachedOwnerFollowsEtcd(t *testing.T) {
	url := clustertest.StartEtcd(t)
	a := join(t, clustertest.Client(t, url), "a", nil)
	b := join(t, clustertest.Client(t, url), "b", nil)
	ctx := context.Background()
	eventually(t, "b's cache synced, alice free", func() bool {
		_, free, ok := b.CachedOwner("alice")
		return ok && free
	})
	if _, err := a.Acquire(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "b's cache says a holds alice", func() bool {
		m, free, ok := b.CachedOwner("alice")
		return ok && !free && m.Name == "a" && m.Advertise == "a.test:8080"
	})
	if err := a.Release(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "b's cache says alice is free again", func() bool {
		_, free, ok := b.CachedOwner("alice")
		return ok && free
	})
	if _, err := a.Acquire(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "b's cache says a holds bob", func() bool {
		_, free, ok := b.CachedOwner("bob")
		return ok && !free
	})
	a.Close(ctx)
	eventually(t, "b's cache drops bob once a left", func() bool {
		_, free, ok := b.CachedOwner("bob")
		return ok && free
	})
}

// TestTransferHandsOverAtomically: a hands alice to b in one
// transaction: a may not write from the call on, b is told and takes her
// as its own, and a third node never finds her free.
func TestTransferHandsOverAtomically(t *testing.T) {
	url := clustertest.StartEtcd(t)
	given := make(chan string, 4)
	a := join(t, clustertest.Client(t, url), "a", nil)
	cb := clustertest.Client(t, url)
	ctx := context.Background()
	b, err := Join(ctx, Config{Client: cb, Name: "b", Advertise: "b.test:8080", TTL: testTTL,
		OnGiven: func(u string) { given <- u }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	c := join(t, clustertest.Client(t, url), "c", nil)
	if _, err := a.Acquire(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	// c keeps trying to take alice during the hand-over: it must never
	// succeed (she is a's, then b's, never nobody's).
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var stolen error
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.Acquire(ctx, "alice"); err == nil {
				stolen = errors.New("c took alice during the hand-over")
				return
			}
		}
	})
	time.Sleep(50 * time.Millisecond)
	if err := a.Transfer(ctx, "alice", "b"); err != nil {
		t.Fatal(err)
	}
	if a.MayWrite("alice") {
		t.Fatal("a may still write alice after handing her over")
	}
	select {
	case u := <-given:
		if u != "alice" {
			t.Fatalf("b was given %q", u)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("b was never told it was given alice")
	}
	if _, err := b.Acquire(ctx, "alice"); err != nil {
		t.Fatalf("b could not take the user handed to it: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	if stolen != nil {
		t.Fatal(stolen)
	}
	if _, err := a.Acquire(ctx, "alice"); !errors.Is(err, ErrOwnedElsewhere) {
		t.Fatalf("a took back alice from b: %v", err)
	}
	if err := a.Transfer(ctx, "alice", "c"); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("a handed over a user it does not hold: %v", err)
	}
}

// TestAskMove: a move of a free user puts her on the target at once; a
// move of a held one is carried out by the owner's OnMove.
func TestAskMove(t *testing.T) {
	url := clustertest.StartEtcd(t)
	ctx := context.Background()
	var a *Node
	moved := make(chan error, 1)
	ca := clustertest.Client(t, url)
	a, err := Join(ctx, Config{Client: ca, Name: "a", Advertise: "a.test:8080", TTL: testTTL,
		OnMove: func(u, to string) { moved <- a.Transfer(ctx, u, to) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	b := join(t, clustertest.Client(t, url), "b", nil)
	cli := clustertest.Client(t, url)
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := AskMove(wctx, cli, "free", "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Acquire(ctx, "free"); err != nil {
		t.Fatalf("b could not take the user moved to it: %v", err)
	}
	if err := AskMove(wctx, cli, "x", "nobody"); !errors.Is(err, ErrNoNode) {
		t.Fatalf("a move to no node: %v", err)
	}
	if _, err := a.Acquire(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := AskMove(wctx, cli, "alice", "b"); err != nil {
		t.Fatal(err)
	}
	if err := <-moved; err != nil {
		t.Fatal(err)
	}
	if m, err := b.Owner(ctx, "alice"); err != nil || m.Name != "b" {
		t.Fatalf("alice's owner after the move: %v %v", m, err)
	}
	resp, err := cli.Get(ctx, movesPrefix, clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("move requests left behind: %v %v", resp, err)
	}
}
