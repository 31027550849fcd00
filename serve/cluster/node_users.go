package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Acquire takes user in one transaction that succeeds only while no key
// for the user exists; the key lives on this node's session lease.
func (n *Node) Acquire(ctx context.Context, user string) (Grant, error) {
	if err := CheckName(user); err != nil {
		return Grant{}, err
	}
	n.mu.Lock()
	t, err := n.currentLocked(ctx)
	if err == nil {
		if g, ok := t.owned[user]; ok && t.fence.up() {
			n.mu.Unlock()
			return g, nil
		}
	}
	letting := err == nil && t.letting[user]
	if err == nil && !letting {
		t.taking[user]++
		defer n.taken(t, user)
	}
	n.mu.Unlock()
	if err != nil {
		return Grant{}, err
	}
	if letting {
		return Grant{}, fmt.Errorf("%w: %s is being let go", ErrNotHeld, user)
	}
	key := usersPrefix + user
	lease := t.session.Lease()
	claim, _ := json.Marshal(Claim{Node: n.cfg.Name, Since: n.cfg.Now().UTC()})
	sent := n.cfg.Now()
	resp, err := n.cfg.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(claim), clientv3.WithLease(lease))).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return Grant{}, fmt.Errorf("etcd: %w", err)
	}
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			return Grant{}, &OwnedError{Owner: "?"} // deleted in between: the next try takes it
		}
		if kvs[0].Lease != int64(lease) {
			var c Claim
			json.Unmarshal(kvs[0].Value, &c)
			return Grant{}, &OwnedError{Owner: c.Node}
		}
		// Ours already: handed over by another node (Transfer) or
		// moved here (AskMove); a user this node is letting go was
		// refused above. Keep going as a fresh grant.
	}
	g := Grant{User: user, Node: n.cfg.Name, Lease: int64(lease), At: sent}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.term != t || !t.fence.up() {
		return Grant{}, ErrFenced
	}
	if t.letting[user] {
		return Grant{}, fmt.Errorf("%w: %s is being let go", ErrNotHeld, user)
	}
	t.owned[user] = g
	return g, nil
}

// MayWrite reports whether this node holds user behind a standing fence.
func (n *Node) MayWrite(user string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.term == nil {
		return false
	}
	_, ok := n.term.owned[user]
	return ok && n.term.fence.up()
}

// Held lists the users this node holds now.
func (n *Node) Held() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.term == nil {
		return nil
	}
	users := make([]string, 0, len(n.term.owned))
	for u := range n.term.owned {
		users = append(users, u)
	}
	return users
}

// stopHolding stops holding user (MayWrite is false from the call on) and
// marks it as being let go, so that no take gives it back to this node
// meanwhile; held says whether this node held it, t is the session then.
func (n *Node) stopHolding(user string) (t *term, held bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	t = n.term
	if t != nil {
		_, held = t.owned[user]
		delete(t.owned, user)
	}
	if held {
		t.letting[user] = true
	}
	return t, held
}

// Release stops holding user (MayWrite is false from the call on) and
// deletes its key if it is still this session's.
func (n *Node) Release(ctx context.Context, user string) error {
	t, held := n.stopHolding(user)
	if !held {
		return nil
	}
	defer n.letGo(t, user)
	key := usersPrefix + user
	_, err := n.cfg.Client.Txn(ctx).
		If(clientv3.Compare(clientv3.LeaseValue(key), "=", t.session.Lease())).
		Then(clientv3.OpDelete(key)).Commit()
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	return nil
}

// taken ends one Acquire of user begun under t.
func (n *Node) taken(t *term, user string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if t.taking[user]--; t.taking[user] <= 0 {
		delete(t.taking, user)
	}
}

// letGo ends the letting of user begun by Release or Transfer.
func (n *Node) letGo(t *term, user string) {
	n.mu.Lock()
	delete(t.letting, user)
	n.mu.Unlock()
}

// Owner is the member holding user, as etcd says now.
func (n *Node) Owner(ctx context.Context, user string) (Member, error) {
	if err := CheckName(user); err != nil {
		return Member{}, err
	}
	return ownerOf(ctx, n.cfg.Client, user)
}

// CachedOwner is the member holding user as this node's watch of etcd
// last said, without a round trip: free when nobody holds it, ok false
// when the cache cannot say (not synced yet, or a claim whose node is
// unknown). It is a routing hint, never a licence to write: a stale
// answer costs a forward that the receiving node refuses or serves by
// its own transaction, and the sender then asks etcd (Owner).
func (n *Node) CachedOwner(user string) (m Member, free, ok bool) {
	return n.cache.owner(user)
}

func ownerOf(ctx context.Context, c *clientv3.Client, user string) (Member, error) {
	resp, err := c.Get(ctx, usersPrefix+user)
	if err != nil {
		return Member{}, fmt.Errorf("etcd: %w", err)
	}
	if len(resp.Kvs) == 0 {
		return Member{}, ErrNoOwner
	}
	var claim Claim
	if err := json.Unmarshal(resp.Kvs[0].Value, &claim); err != nil {
		return Member{}, fmt.Errorf("etcd: the owner of %s: %w", user, err)
	}
	m := Member{Name: claim.Node}
	nresp, err := c.Get(ctx, nodesPrefix+claim.Node)
	if err != nil {
		return Member{}, fmt.Errorf("etcd: %w", err)
	}
	if len(nresp.Kvs) > 0 {
		json.Unmarshal(nresp.Kvs[0].Value, &m)
	}
	return m, nil
}

// Close stops writing for every user, then revokes the session's lease,
// which deletes the node's key and every user key it held at once.
func (n *Node) Close(ctx context.Context) error {
	n.mu.Lock()
	t := n.term
	n.term = nil
	n.closed = true
	if t != nil {
		t.owned = map[string]Grant{}
	}
	n.mu.Unlock()
	n.stopCache()
	<-n.cacheDone
	if t == nil {
		return nil
	}
	t.fence.drop()
	t.stop()
	<-t.done
	t.session.Orphan()
	_, err := n.cfg.Client.Revoke(ctx, t.session.Lease())
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return nil
	}
	return err
}

// Fell is closed when the current session's fence falls (nil channel,
// never closed, when there is no session).
func (n *Node) Fell() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.term == nil {
		return nil
	}
	return n.term.fence.fallen()
}
