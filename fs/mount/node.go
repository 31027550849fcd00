package mount

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"syscall"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// node is a file or directory of the backing working tree. It is go-fuse's
// loopback node with mindmount's rules on top: every mutation is checked
// against the repository's policy (.git, read_only, synthesized names) and
// reported to the graph and the tracker once it succeeded.
type node struct {
	*fusefs.LoopbackNode
	m *mountState
}

var _ = (fusefs.NodeWrapChilder)((*node)(nil))

// WrapChild makes every loopback node the loopback creates one of ours, so
// the rules hold at any depth.
func (n *node) WrapChild(ctx context.Context, ops fusefs.InodeEmbedder) fusefs.InodeEmbedder {
	if lb, ok := ops.(*fusefs.LoopbackNode); ok {
		return &node{LoopbackNode: lb, m: n.m}
	}
	return ops
}

// rel returns the node's repo path; ok=false once it was unlinked.
func (n *node) rel() (string, bool) { return n.m.relOf(n.EmbeddedInode()) }

// child returns the repo path of name in this directory.
func (n *node) child(name string) (string, bool) {
	dir, ok := n.rel()
	if !ok {
		return "", false
	}
	return path.Join(dir, name), true
}

var _ = (fusefs.NodeLookuper)((*node)(nil))

// Lookup answers the daemon's virtual names first (they shadow files of the
// same name that watch mode may have left in the backing tree), then the
// backing directory. ENOENT is cached by the kernel for the negative
// timeout; changes beside the mount are pushed out with NotifyEntry.
func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	if dir, ok := n.rel(); ok {
		if in := n.m.synthChild(ctx, n.EmbeddedInode(), dir, name, out); in != nil {
			return in, 0
		}
		if in := n.m.sharedChild(dir, name, out); in != nil {
			return in, 0
		}
		if rel := path.Join(dir, name); isGit(rel) {
			in, errno := n.LoopbackNode.Lookup(ctx, name, out)
			if errno != 0 || !gitStable(rel) {
				uncachedEntry(out)
			}
			n.m.present(&out.Attr)
			return in, errno
		}
		in, errno := n.LoopbackNode.Lookup(ctx, name, out)
		if errno == 0 {
			n.m.fixMode(path.Join(dir, name), &out.Attr)
			n.m.revocableEntry(out)
		}
		return in, errno
	}
	return n.LoopbackNode.Lookup(ctx, name, out)
}

// fixMode reports a read_only memory as mode 0444, so careful tools
// (vim, install, test -w as another user) refuse before they try.
func (m *mountState) fixMode(rel string, a *fuse.Attr) {
	m.present(a)
	if a.Mode&syscall.S_IFMT == syscall.S_IFREG && a.Mode&0o222 != 0 && errors.Is(m.writable(rel), tracker.ErrReadOnly) {
		a.Mode &^= 0o222
	}
}

var _ = (fusefs.NodeGetattrer)((*node)(nil))

// Getattr is the loopback's, except that .git is never trusted for long:
// see uncachedEntry.
func (n *node) Getattr(ctx context.Context, f fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	errno := n.LoopbackNode.Getattr(ctx, f, out)
	if rel, ok := n.rel(); ok {
		if n.m.fw != nil && errno == syscall.ENOENT && n.m.fwStagedAttr(rel, out) {
			return 0
		}
		if n.m.fw != nil {
			if size, staged := n.m.fwSize(rel); staged {
				out.Size = size
			}
		}
		if isGit(rel) && !gitStable(rel) {
			out.SetTimeout(time.Nanosecond)
		}
		n.m.fixMode(rel, &out.Attr)
		n.m.revocableAttr(out)
	}
	return errno
}

// uncachedEntry keeps the kernel from trusting a .git entry, its attributes
// or its absence. The daemon's own commits write .git beside the mount (refs
// are replaced by rename, logs grow, objects appear), so the long timeouts
// that are sound for the working tree would serve "git log" inside the mount
// a stale branch head. Objects are the exception (see gitStable).
// Zero would mean "the mount default", hence a nanosecond.
func uncachedEntry(out *fuse.EntryOut) {
	out.SetEntryTimeout(time.Nanosecond)
	out.SetAttrTimeout(time.Nanosecond)
}

var _ = (fusefs.NodeOpendirHandler)((*node)(nil))

// OpendirHandle lets the kernel cache directory listings (FOPEN_CACHE_DIR):
// the kernel drops the cache itself when something changes through the
// mount, and the invalidator does when something changes beside it. The
// root and .mindmount list their virtual files as well.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	dir, ok := n.rel()
	if !ok {
		return nil, 0, syscall.ENOENT
	}
	var cached uint32 = fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE
	if isGit(dir) && !gitFanout(dir) {
		// Commits change .git beside the mount; see uncachedEntry. The
		// object fan-out folders are the exception: they are most of
		// .git, and the invalidator drops their listings after every
		// commit and HEAD move (gitListings).
		cached = 0
	}
	if names := memgraph.SynthesizedIn(dir); names != nil {
		fh, _, errno := n.LoopbackNode.OpendirHandle(ctx, flags)
		if errno != 0 {
			return nil, 0, errno
		}
		return n.m.mergeSynth(fh.(fusefs.DirStream), dir, names), cached, 0
	}
	// Check the directory is still there: an opendir must fail now, not at
	// the first read.
	var st syscall.Stat_t
	abs := n.m.abs(dir)
	if err := syscall.Lstat(abs, &st); err != nil {
		return nil, 0, fusefs.ToErrno(err)
	}
	return &lazyDir{open: func() (fusefs.DirStream, syscall.Errno) {
		return fusefs.NewLoopbackDirStream(abs)
	}}, cached, 0
}

// writeFlags are the open flags that can change a file.
const writeFlags = syscall.O_WRONLY | syscall.O_RDWR | syscall.O_TRUNC | syscall.O_APPEND

var _ = (fusefs.NodeOpener)((*node)(nil))

// Open answers ENOSYS by default: the kernel then never sends OPEN again on
// this mount and serves reads from its page cache (see node_io.go), and
// the refusals happen where data changes (Write, Setattr, …).
//
// With Options.OpenEachFile (or Passthrough) the file is passed through
// with a handle: read-only opens keep the kernel's page cache
// (FOPEN_KEEP_CACHE; the invalidator drops pages when the backing file
// changes beside the mount) and skip the flush on close (FOPEN_NOFLUSH);
// opens for writing are refused under .git (EROFS) and on read_only
// memories (EACCES, what open(2) says for a file the caller may not
// write) before the backing file is touched.
func (n *node) Open(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	if n.m.opt.noOpen() {
		return nil, 0, syscall.ENOSYS
	}
	rel, ok := n.rel()
	if !ok {
		return nil, 0, syscall.ENOENT
	}
	write := flags&writeFlags != 0
	if write {
		if err := n.m.writable(rel); err != nil {
			if errors.Is(err, tracker.ErrReadOnly) {
				err = fs.ErrPermission
			}
			return nil, 0, toErrno(n.m.log, "open", err)
		}
	}
	fh, errno := n.m.openBeneath(rel, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	writer := ""
	if write { // only writers are named in commits: spare readers the /proc lookup
		writer = n.m.callers.of(ctx)
	}
	h := n.m.wrapHandle(n, fh, write, writer)
	if write || (isGit(rel) && !gitImmutable(rel)) {
		return h, 0, 0 // no FOPEN_KEEP_CACHE: .git changes beside the mount
	}
	return h, fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_NOFLUSH, 0
}
