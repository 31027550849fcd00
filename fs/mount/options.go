package mount

import (
	"log/slog"
	"time"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// Options configure a mount. The zero value is a private mount with the
// defaults below.
type Options struct {
	// AllowOther lets other users (and containers the mount is bind-mounted
	// into) use the mount. As non-root it needs user_allow_other in
	// /etc/fuse.conf.
	AllowOther bool
	// Debug logs every FUSE request.
	Debug bool
	// OnConsolidate is called when something is written to
	// .mindmount/consolidate. Nil: writes are accepted and ignored.
	OnConsolidate func()
	// Logger receives the mount's logs; nil means slog.Default().
	Logger *slog.Logger

	// CacheTimeout is how long the kernel may trust entries, attributes and
	// missing names without asking. The daemon is the only writer through the
	// mount and invalidates explicitly whatever changes beside it, so it can
	// be long. Zero means one hour.
	CacheTimeout time.Duration
	// Passthrough lets the kernel do file I/O on the backing files itself
	// (Linux 6.9+, root only; it switches itself off silently otherwise).
	// Off by default: registering and releasing the backing file costs two
	// extra calls per open, which for small memory files outweighs the
	// saved reads; scripts/bench-mount.sh measured grep -r at about 2x the
	// cost with it (MINDMOUNT_PASSTHROUGH=1 to compare). Every open of a
	// mount uses the same mode, as the kernel requires per inode.
	Passthrough bool
	// OpenEachFile restores the read path that answers an OPEN per file
	// (with a handle, refusals at open, and a flush on close). Off by
	// default: the mount answers OPEN with ENOSYS once and the kernel
	// serves warm reads from its page cache without asking (see
	// node_io.go; scripts/bench-mount.sh compares). Passthrough implies it.
	OpenEachFile bool
	// Owner, when set, is the one user (besides root) whose requests the
	// mount answers: mindmount serve's per-user mounts. Every other caller
	// gets EACCES from the daemon itself (ownerGuard).
	Owner *Owner
	// Teams are projected at shared/<team>/, each written through its own
	// tracker with the member's role enforced (shared.go).
	Teams []Team
}

// Owner is the user a per-user mount serves.
type Owner struct{ UID, GID uint32 }

// noOpen reports whether the mount runs without OPEN (the default): the
// kernel is answered ENOSYS once and serves reads without asking. It stops
// sending OPEN for the whole mount at the first ENOSYS, so every file of
// the mount must ask this one rule.
func (o *Options) noOpen() bool { return !o.OpenEachFile && !o.Passthrough }

// model is what the mount needs of *memgraph.Graph. An interface so the FUSE
// layer can be exercised with a fake in its unit tests.
type model interface {
	Root() string
	Memories(kind memgraph.Kind) []*memgraph.Memory
	ReadOnly(rel string) bool
	Index(kind memgraph.Kind) []byte
	Context(opt memgraph.ContextOptions) []byte
}

// changes is what the mount needs of *tracker.Tracker, the one writer of
// the repository and of the graph.
type changes interface {
	Touch(rel, writer string)
	Refresh(rels ...string)
	Renamed(oldRel, newRel, writer string)
	Status() []byte
	CanChange(rel string, scope tracker.Scope) error
	CanCreate(rel string, scope tracker.Scope) error
	// The size rule and its running total (tracker's usage.go).
	Grow(rel string, end int64) error
	Truncate(rel string, size int64) error
	AppendRoom(rel string, n int64) error
	Removed(rel string)
	Moved(oldRel, newRel string)
	Exchanged(a, b string)
}

// deps bundles what a mount projects.
type deps struct {
	graph   model
	tracker changes
	// listen adds the mount's listener to the tracker's (Listeners.Add).
	listen func(tracker.Listener)
	// search renders .mindmount/search/<query>; nil renders a notice.
	search func(query string) []byte
	// sandbox records the sandbox a writer runs in for the next commit's
	// Mindmount-Sandbox trailer (a per-user mount, Options.Owner); nil:
	// not recorded.
	sandbox func(name string)
}
