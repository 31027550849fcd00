package fs

import (
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/gitrepo"
	"github.com/mindmount/mindmount/memgraph"
)

// Mount projects the repository of g (whose git writer is r and whose change
// tracker is t) at mountpoint and serves it until Unmount. It returns once
// the mount is usable. The caller runs t.Run and, at shutdown, t.Flush and
// Unmount.
//
// Errors say what to do: ErrNoFUSE when /dev/fuse is missing,
// ErrMountpointBusy when something is mounted there already or the
// directory is not empty.
func Mount(mountpoint string, g *memgraph.Graph, t *tracker.Tracker, r *gitrepo.Repo, opt Options) (*fuse.Server, error) {
	// Every commit goes through the tracker, the repository's one writer,
	// and so does the write policy (tracker.CanChange). r is unused since
	// the policy moved to the tracker; it stays until the callers change
	// with the tracker's config (issue 24, one writer).
	srv, _, err := mount(mountpoint, deps{graph: g, tracker: t, search: searchFunc(g), sandbox: t.NoteSandbox}, opt)
	return srv, err
}
