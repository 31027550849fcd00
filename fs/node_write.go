package fs

import (
	"context"
	"io/fs"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/engram-dev/engram/memgraph"
)

// checkNew is the policy for a new name in this directory (create, mkdir,
// symlink, link, mknod): nothing new under .git, and no shadowing of a
// virtual file.
func (n *node) checkNew(name string) (string, syscall.Errno) {
	rel, ok := n.child(name)
	if !ok {
		return "", syscall.ENOENT
	}
	var err error
	switch {
	case isGit(rel):
		err = errGitReadOnly
	case isSynth(rel):
		err = fs.ErrExist
	}
	if err == nil {
		n.m.own.mark(rel)
	}
	return rel, toErrno(n.m.log, "new "+rel, err)
}

// checkChange is the policy for changing, moving or removing an existing
// name.
func (n *node) checkChange(rel string) syscall.Errno {
	var err error
	switch {
	case isGit(rel):
		err = errGitReadOnly
	case isSynth(rel):
		err = errSynthesized
	case n.m.graph.ReadOnly(rel):
		err = errReadOnlyMemory
	case rel == memgraph.StateDir:
		err = errStateDir
	}
	if err == nil {
		n.m.own.mark(rel)
	}
	return toErrno(n.m.log, "change "+rel, err)
}

var _ = (fusefs.NodeCreater)((*node)(nil))

// Create makes a new file in the backing tree. The tracker hears of it when
// the writer closes it (flush), and once more on release.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, fusefs.FileHandle, uint32, syscall.Errno) {
	if _, errno := n.checkNew(name); errno != 0 {
		return nil, nil, 0, errno
	}
	in, fh, _, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	ch, _ := in.Operations().(*node)
	return in, n.m.wrapHandle(ch, fh, true, n.m.callers.of(ctx)), 0, 0
}

var _ = (fusefs.NodeMkdirer)((*node)(nil))

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	if _, errno := n.checkNew(name); errno != 0 {
		return nil, errno
	}
	return n.LoopbackNode.Mkdir(ctx, name, mode, out)
}

var _ = (fusefs.NodeRmdirer)((*node)(nil))

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	rel, ok := n.child(name)
	if !ok {
		return syscall.ENOENT
	}
	if errno := n.checkChange(rel); errno != 0 {
		return errno
	}
	return n.LoopbackNode.Rmdir(ctx, name)
}

var _ = (fusefs.NodeUnlinker)((*node)(nil))

// Unlink removes a file; a read_only memory refuses (EPERM) and stays.
func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	rel, ok := n.child(name)
	if !ok {
		return syscall.ENOENT
	}
	if errno := n.checkChange(rel); errno != 0 {
		return errno
	}
	if errno := n.LoopbackNode.Unlink(ctx, name); errno != 0 {
		return errno
	}
	n.m.changed(rel, n.m.callers.of(ctx))
	return 0
}

var _ = (fusefs.NodeRenamer)((*node)(nil))

// Rename moves a file or directory. Refused when either side is under .git
// (EROFS) or synthesized, when the source or the replaced target is a
// read_only memory, or when a directory holding one would move (EPERM).
func (n *node) Rename(ctx context.Context, name string, newParent fusefs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	oldRel, ok := n.child(name)
	if !ok {
		return syscall.ENOENT
	}
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV // a virtual directory
	}
	newRel, ok := np.child(newName)
	if !ok {
		return syscall.ENOENT
	}
	for _, rel := range []string{oldRel, newRel} {
		if errno := n.checkChange(rel); errno != 0 {
			return errno
		}
	}
	dir := n.m.isDir(oldRel)
	if dir && n.m.readOnlyBelow(oldRel) {
		return syscall.EPERM
	}
	exchange := flags&fusefs.RENAME_EXCHANGE != 0
	if exchange && n.m.isDir(newRel) && n.m.readOnlyBelow(newRel) {
		return syscall.EPERM
	}
	if errno := n.LoopbackNode.Rename(ctx, name, np.LoopbackNode, newName, flags); errno != 0 {
		return errno
	}

	writer := n.m.callers.of(ctx)
	if dir {
		n.m.refreshTree(oldRel)
		n.m.refreshTree(newRel)
	} else {
		n.m.refresh(oldRel)
		n.m.refresh(newRel)
	}
	if exchange {
		n.m.tracker.Touch(oldRel, writer)
		n.m.tracker.Touch(newRel, writer)
	} else {
		n.m.tracker.Renamed(oldRel, newRel, writer)
	}
	return 0
}

var _ = (fusefs.NodeSetattrer)((*node)(nil))

// Setattr covers truncate, chmod, chown and utimes. A read_only memory keeps
// its size, mode and owner (EPERM); only its times may change, which git
// does not record.
func (n *node) Setattr(ctx context.Context, f fusefs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	rel, ok := n.rel()
	if ok {
		if isGit(rel) {
			return toErrno(n.m.log, "setattr", errGitReadOnly)
		}
		_, sizeSet := in.GetSize()
		_, modeSet := in.GetMode()
		_, uidSet := in.GetUID()
		_, gidSet := in.GetGID()
		if (sizeSet || modeSet || uidSet || gidSet) && n.m.graph.ReadOnly(rel) {
			return toErrno(n.m.log, "setattr", errReadOnlyMemory)
		}
	}
	if h, isOurs := f.(*handle); isOurs {
		f = h.LoopbackFile
	}
	if errno := n.LoopbackNode.Setattr(ctx, f, in, out); errno != 0 {
		return errno
	}
	_, sizeSet := in.GetSize()
	_, modeSet := in.GetMode()
	if ok && (sizeSet || modeSet) {
		n.m.changed(rel, n.m.callers.of(ctx))
	}
	return 0
}

var _ = (fusefs.NodeSymlinker)((*node)(nil))

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	rel, errno := n.checkNew(name)
	if errno != 0 {
		return nil, errno
	}
	in, errno := n.LoopbackNode.Symlink(ctx, target, name, out)
	if errno == 0 {
		n.m.changed(rel, n.m.callers.of(ctx))
	}
	return in, errno
}

var _ = (fusefs.NodeLinker)((*node)(nil))

// Link refuses hard links: git cannot represent them, and a second name
// for a memory would diverge into a copy at the first commit.
func (n *node) Link(ctx context.Context, target fusefs.InodeEmbedder, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	if _, errno := n.checkNew(name); errno != 0 {
		return nil, errno
	}
	return nil, toErrno(n.m.log, "link", errHardLink)
}

var _ = (fusefs.NodeMknoder)((*node)(nil))

// Mknod refuses device files and fifos, which git cannot store.
func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	if _, errno := n.checkNew(name); errno != 0 {
		return nil, errno
	}
	return nil, syscall.EPERM
}

var _ = (fusefs.NodeTmpfiler)((*node)(nil))

// Tmpfile refuses O_TMPFILE: the only way to give such a file a name is a
// hard link, which we refuse; callers fall back to a named temp file.
func (n *node) Tmpfile(ctx context.Context, flags uint32, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, fusefs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EOPNOTSUPP
}

var _ = (fusefs.NodeSetxattrer)((*node)(nil))

func (n *node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	if rel, ok := n.rel(); !ok || n.checkChange(rel) != 0 {
		return syscall.EPERM
	}
	return n.LoopbackNode.Setxattr(ctx, attr, data, flags)
}

var _ = (fusefs.NodeRemovexattrer)((*node)(nil))

func (n *node) Removexattr(ctx context.Context, attr string) syscall.Errno {
	if rel, ok := n.rel(); !ok || n.checkChange(rel) != 0 {
		return syscall.EPERM
	}
	return n.LoopbackNode.Removexattr(ctx, attr)
}
