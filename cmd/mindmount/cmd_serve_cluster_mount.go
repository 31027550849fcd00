package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/mindmount/mindmount/serve/cluster"
)

var (
	// errNoMountHere: POST /v1/cluster/mount on a node without --mount.
	errNoMountHere = errors.New("this node serves no mounts (no --mount)")
	// errLeavingNode: the node is handing its users back (SIGTERM).
	errLeavingNode = errors.New("this node is leaving the cluster")
)

// mountHere is POST /v1/cluster/mount: a sandbox on this node is about
// to bind id's mount, the busiest door, so id is served here. A user
// another node holds is handed over (that node ends its requests,
// flushes, pushes and moves the key to this node's lease in one
// transaction); a free one is taken. Returns MNT/<id> once id's worker,
// and with it the mount, runs here.
func (c *clusterRouter) mountHere(ctx context.Context, id string) (string, error) {
	if c.mount == "" {
		return "", errNoMountHere
	}
	if _, err := c.ws.Lookup(id); err != nil {
		return "", err
	}
	if c.leaving.Load() {
		return "", errLeavingNode
	}
	mctx, cancel := context.WithTimeout(ctx, moveWait)
	defer cancel()
	if m, err := c.node.Owner(mctx, id); err == nil && m.Name != c.node.Self().Name {
		if err := cluster.AskMove(mctx, c.cli, id, c.node.Self().Name); err != nil {
			return "", err
		}
		c.log.Info("cluster: a mount request moved a user here", "user", id, "from", m.Name)
	}
	g := c.gate(id)
	g.rw.RLock()
	defer g.rw.RUnlock()
	for mctx.Err() == nil {
		if c.node.MayWrite(id) {
			_, release, err := c.local(mctx, id, g)
			if err != nil {
				return "", err
			}
			release()
			return filepath.Join(c.mount, id), nil
		}
		if _, err := c.node.Acquire(mctx, id); err == nil {
			_, release, err := c.take(mctx, id, g)
			if err != nil {
				return "", err
			}
			release()
			return filepath.Join(c.mount, id), nil
		} else if !errors.Is(err, cluster.ErrOwnedElsewhere) && !errors.Is(err, cluster.ErrNotHeld) {
			return "", err
		}
		select { // the hand-over's last step (this node's take) under way
		case <-mctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	return "", fmt.Errorf("the user did not come to this node: %w", mctx.Err())
}

// clusterMountHere is POST /v1/cluster/mount's handler in a cluster
// (nil, no such endpoint, otherwise).
func clusterMountHere() func(context.Context, string) (string, error) {
	if clusterForward == nil {
		return nil
	}
	return clusterForward.mountHere
}
