package mount

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/subtree"
)

// mountState is shared by every node of one mount.
type mountState struct {
	deps
	opt     Options
	log     *slog.Logger
	dir     string // backing working tree, absolute
	callers *callerNames
	inval   *invalidator
	own     ownWrites
	started time.Time
	owner   fuse.Owner // of the backing root, for virtual files
	// inoSalt offsets the virtual inodes (0: every mount is one
	// repository's; serve's users each have a mount of their own).
	inoSalt uint64
	// presentAs, for a team's subtree in a per-user mount (Options.Owner),
	// is who every entry is shown to belong to: the team's files are its
	// uid's, readable by its group, which the worker has and the member's
	// own processes do not; the kernel's mode check (default_permissions)
	// is made against the member, and the member's role is the daemon's.
	presentAs *Owner

	root *node         // set once before the mount starts
	tree *subtree.Tree // the backing root, opened: every open beneath it

	// synth holds the daemon's virtual inodes by repo path, created on
	// first lookup and kept for the life of the mount.
	synthMu sync.Mutex
	synth   map[string]*fusefs.Inode

	closed atomic.Bool

	// teams are the team repositories under shared/, by name: each a
	// mount state of its own (shared.go). Nil for none.
	teams map[string]*mountState

	appends *appendRequests // in-flight WRITEs from O_APPEND descriptors (one per FUSE server: teams share it)

	// dirty holds paths written since the graph last read them: a WRITE
	// or SETATTR marks them, and they are folded into the graph before
	// the next read of a synthesized file (foldDirty), so the indexes and
	// CONTEXT.md read right after a write reflect it.
	dirtyMu sync.Mutex
	dirty   map[string]bool

	// fw, for a team's subtree a member changes through the team's
	// writer, stages and forwards every change (shared_forward.go).
	fw *forwarding
	// keepFlush: FLUSH is answered, never ENOSYS, in a mount with a
	// forwarding team: a close is when a staged file is forwarded.
	keepFlush bool
}

// writable says why the content of rel may not change, or nil: the
// tracker's write policy (tracker.CanChange), mapped to errnos by toErrno.
func (m *mountState) writable(rel string) error {
	return m.tracker.CanChange(rel, tracker.AnyFile)
}

// wrote notes a change of rel's content through the mount: the graph
// reads it before the next synthesized read, the tracker commits it, and
// fsnotify's echo of it is known for ours.
func (m *mountState) wrote(rel, writer string) {
	m.own.mark(m.abs(rel), rel)
	if memgraph.IsMemoryPath(rel) {
		m.dirtyMu.Lock()
		if m.dirty == nil {
			m.dirty = map[string]bool{}
		}
		m.dirty[rel] = true
		m.dirtyMu.Unlock()
	}
	m.tracker.Touch(rel, writer)
}

// foldDirty brings the graph in step with every path written since the
// last fold.
func (m *mountState) foldDirty() {
	m.dirtyMu.Lock()
	d := m.dirty
	m.dirty = nil
	m.dirtyMu.Unlock()
	for rel := range d {
		m.refresh(rel)
	}
}

func (m *mountState) rootInode() *fusefs.Inode { return m.root.EmbeddedInode() }

// relOf returns the repo path of an inode, or ok=false for an inode that is
// no longer linked below the root (unlinked while open).
func (m *mountState) relOf(in *fusefs.Inode) (string, bool) {
	root := m.rootInode()
	var segs []string
	for p := in; p != root; {
		name, parent := p.Parent()
		if parent == nil {
			return "", false
		}
		segs = append(segs, name)
		p = parent
	}
	for i, j := 0, len(segs)-1; i < j; i, j = i+1, j-1 {
		segs[i], segs[j] = segs[j], segs[i]
	}
	return strings.Join(segs, "/"), true
}

// abs returns the backing path of a repo path.
func (m *mountState) abs(rel string) string { return filepath.Join(m.dir, filepath.FromSlash(rel)) }

// isGit reports whether rel is the repository's own .git (readable, never
// writable through the mount).
func isGit(rel string) bool { return rel == ".git" || strings.HasPrefix(rel, ".git/") }

// gitImmutable reports whether rel is a git object file: a loose object
// (.git/objects/ab/cdef…) or a pack file, named by its content and never
// rewritten in place, so the kernel may cache it like a working-tree file.
// Everything else under .git changes beside the mount and is not cached.
func gitImmutable(rel string) bool {
	rest, ok := strings.CutPrefix(rel, ".git/objects/")
	if !ok {
		return false
	}
	dir, name, ok := strings.Cut(rest, "/")
	if !ok || strings.Contains(name, "/") {
		return false
	}
	if dir == "pack" {
		return strings.HasPrefix(name, "pack-") &&
			(strings.HasSuffix(name, ".pack") || strings.HasSuffix(name, ".idx") || strings.HasSuffix(name, ".rev"))
	}
	return len(dir) == 2 && isHex(dir) && len(name) >= 38 && isHex(name)
}

// gitFanout reports whether rel is one of the loose-object folders
// .git/objects/00 … ff.
func gitFanout(rel string) bool {
	dir, ok := strings.CutPrefix(rel, ".git/objects/")
	return ok && len(dir) == 2 && isHex(dir)
}

// gitStable reports whether the kernel may trust the entry and attributes
// of rel for long: object files, and the object folders that hold them
// (.git/objects, its fan-out folders and pack/), which are only ever added
// to. Their listings are still read afresh (see OpendirHandle).
func gitStable(rel string) bool {
	if gitImmutable(rel) || rel == ".git/objects" || rel == ".git/objects/pack" {
		return true
	}
	return gitFanout(rel)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// refresh brings the graph in step with the backing file at rel, at once,
// so that the indexes and CONTEXT.md read right after a writer closed its
// file reflect it. The tracker does it (Refresh): it is the one writer of
// the graph, and its commit of the same content then updates nothing.
func (m *mountState) refresh(rels ...string) { m.tracker.Refresh(rels...) }

// refreshTree refreshes every memory below the directory dir after it was
// renamed or removed: memories the graph knows under the old name are
// dropped, files now on disk under the new name are read.
func (m *mountState) refreshTree(dir string) {
	prefix := dir + "/"
	for _, k := range []memgraph.Kind{memgraph.KindUser, memgraph.KindCharacter, memgraph.KindBlock, memgraph.KindExternal} {
		for _, mem := range m.graph.Memories(k) {
			if strings.HasPrefix(mem.Path, prefix) {
				m.refresh(mem.Path)
			}
		}
	}
	_ = filepath.WalkDir(m.abs(dir), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, rerr := filepath.Rel(m.dir, p)
		if rerr == nil {
			m.refresh(filepath.ToSlash(rel))
		}
		return nil
	})
}

// readOnlyBelow reports whether a read_only memory lives under directory
// dir, so that renaming the directory would move it.
func (m *mountState) readOnlyBelow(dir string) bool {
	prefix := dir + "/"
	for _, k := range []memgraph.Kind{memgraph.KindUser, memgraph.KindCharacter, memgraph.KindBlock, memgraph.KindExternal} {
		for _, mem := range m.graph.Memories(k) {
			if strings.HasPrefix(mem.Path, prefix) && m.graph.ReadOnly(mem.Path) {
				return true
			}
		}
	}
	return false
}

// changed is called after every mutation through the mount: graph first,
// so the synthesized files read right after reflect it, then the tracker,
// which commits it.
func (m *mountState) changed(rel, writer string) {
	m.refresh(rel)
	m.tracker.Touch(rel, writer)
}

// isDir reports whether the backing path is a directory (lstat).
func (m *mountState) isDir(rel string) bool {
	var st syscall.Stat_t
	return syscall.Lstat(m.abs(rel), &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFDIR
}
