package mount

import (
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mindmount/mindmount/fs/tracker"
)

// Mount projects the repository that t writes (and whose graph t keeps) at
// mountpoint and serves it until Unmount. It returns once the mount is
// usable. The mount hears of commits and edits beside it through ls, the
// fan-out of t's Listener. The caller runs t.Run and, at shutdown, t.Flush
// and Unmount.
//
// Errors say what to do: ErrNoFUSE when /dev/fuse is missing,
// ErrMountpointBusy when something is mounted there already or the
// directory is not empty.
func Mount(mountpoint string, t *tracker.Tracker, ls *tracker.Listeners, opt Options) (*fuse.Server, error) {
	// Every commit and every update of the graph goes through the
	// tracker, the repository's one writer, and so does the write policy
	// (tracker.CanChange).
	g := t.Graph()
	srv, _, err := mount(mountpoint, deps{graph: g, tracker: t, listen: ls.Add, search: searchFunc(g), sandbox: t.NoteSandbox}, opt)
	return srv, err
}
