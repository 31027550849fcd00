package mount

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
)

// checkNew is the policy for a new name in this directory (create, mkdir,
// symlink, link, mknod): the tracker's (tracker.CanCreate: nothing new
// under .git, no control character in the name, where a newline could
// start a line of its own in an index); a virtual file already holds its
// name (EEXIST).
func (n *node) checkNew(name string) (string, error) {
	rel, ok := n.child(name)
	if !ok {
		return "", fs.ErrNotExist
	}
	err := n.m.tracker.CanCreate(rel, tracker.AnyFile)
	if errors.Is(err, tracker.ErrSynthesized) {
		err = fs.ErrExist
	}
	return rel, err
}

// checkChange is the policy for changing, moving or removing an existing
// name.
func (n *node) checkChange(rel string) error {
	if rel == memgraph.StateDir {
		return errStateDir
	}
	return n.m.writable(rel)
}

var _ = (fusefs.NodeCreater)((*node)(nil))

// Create makes a new file in the backing tree and tells the tracker at
// once (an empty file is a change too); later writes are noted at WRITE.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, fusefs.FileHandle, uint32, syscall.Errno) {
	rel, err := n.checkNew(name)
	if err != nil {
		return nil, nil, 0, toErrno(n.m.log, "create", err)
	}
	if n.m.fw != nil {
		return n.fwCreate(ctx, rel, out)
	}
	in, fh, _, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	writer := n.m.callers.of(ctx)
	n.m.wrote(rel, writer)
	ch, _ := in.Operations().(*node)
	return in, n.m.wrapHandle(ch, fh, true, writer), 0, 0
}

var _ = (fusefs.NodeMkdirer)((*node)(nil))

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	rel, err := n.checkNew(name)
	if err != nil {
		return nil, toErrno(n.m.log, "mkdir", err)
	}
	in, errno := n.LoopbackNode.Mkdir(ctx, name, mode, out)
	if errno == 0 {
		n.m.own.mark(n.m.abs(rel), rel)
	}
	return in, errno
}

var _ = (fusefs.NodeRmdirer)((*node)(nil))

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	rel, ok := n.child(name)
	if !ok {
		return toErrno(n.m.log, "", errGone)
	}
	if err := n.checkChange(rel); err != nil {
		return toErrno(n.m.log, "rmdir", err)
	}
	errno := n.LoopbackNode.Rmdir(ctx, name)
	if errno == 0 {
		n.m.own.mark(n.m.abs(rel), rel)
	}
	return errno
}

var _ = (fusefs.NodeUnlinker)((*node)(nil))

// Unlink removes a file; a read_only memory refuses (EPERM) and stays.
func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	rel, ok := n.child(name)
	if !ok {
		return toErrno(n.m.log, "", errGone)
	}
	if err := n.checkChange(rel); err != nil {
		return toErrno(n.m.log, "unlink", err)
	}
	if n.m.fw != nil {
		return n.m.fwRemove(ctx, rel)
	}
	if errno := n.LoopbackNode.Unlink(ctx, name); errno != 0 {
		return errno
	}
	n.m.tracker.Removed(rel)
	n.m.changed(rel, n.m.callers.of(ctx))
	return 0
}

var _ = (fusefs.NodeRenamer)((*node)(nil))

// Rename moves a file or directory. Refused when either side is under .git
// (EROFS) or synthesized, when the source or the replaced target is a
// read_only memory, when a directory holding one would move (EPERM), or
// when the new name breaks the naming rule (EINVAL).
func (n *node) Rename(ctx context.Context, name string, newParent fusefs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	oldRel, ok := n.child(name)
	if !ok {
		return toErrno(n.m.log, "", errGone)
	}
	np, ok := newParent.(*node)
	if !ok {
		return toErrno(n.m.log, "rename", errVirtualDir)
	}
	if np.m != n.m {
		// Another repository (a team's under shared/): git has no move
		// between repositories; mv copies and removes, each through its
		// own repository's writer and role.
		return syscall.EXDEV
	}
	newRel, ok := np.child(newName)
	if !ok {
		return toErrno(n.m.log, "", errGone)
	}
	if errno := n.checkRename(oldRel, newRel, np, newName, flags); errno != 0 {
		return errno
	}
	if n.m.fw != nil {
		return n.m.fwRename(ctx, oldRel, newRel, flags)
	}
	dir := n.m.isDir(oldRel)
	exchange := flags&fusefs.RENAME_EXCHANGE != 0
	if errno := n.LoopbackNode.Rename(ctx, name, np.LoopbackNode, newName, flags); errno != 0 {
		return errno
	}
	n.m.own.mark(n.m.abs(oldRel), oldRel)
	n.m.own.mark(n.m.abs(newRel), newRel)
	if exchange {
		n.m.tracker.Exchanged(oldRel, newRel)
	} else {
		n.m.tracker.Moved(oldRel, newRel)
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
	if dir {
		// The files that moved with the folder are this writer's too, not
		// the anonymous fsnotify sightings of them (an "editor").
		n.m.touchTree(newRel, writer)
		if exchange {
			n.m.touchTree(oldRel, writer)
		}
	}
	return 0
}

// checkRename is Rename's policy, before anything moves.
func (n *node) checkRename(oldRel, newRel string, np *node, newName string, flags uint32) syscall.Errno {
	if err := n.checkChange(oldRel); err != nil {
		return toErrno(n.m.log, "rename", err)
	}
	if newRel == memgraph.StateDir {
		return toErrno(n.m.log, "rename", errStateDir)
	}
	if err := tracker.InboxRename(oldRel, newRel); err != nil {
		return toErrno(n.m.log, "rename", err)
	}
	if err := n.m.tracker.CanCreate(newRel, tracker.AnyFile); err != nil {
		return toErrno(n.m.log, "rename", err)
	}
	if n.m.isDir(oldRel) && n.m.readOnlyBelow(oldRel) {
		return toErrno(n.m.log, "rename", tracker.ErrReadOnly)
	}
	if flags&fusefs.RENAME_EXCHANGE != 0 && n.m.isDir(newRel) && n.m.readOnlyBelow(newRel) {
		return toErrno(n.m.log, "rename", tracker.ErrReadOnly)
	}
	return 0
}

// touchTree tells the tracker that every file below dir was changed by
// writer.
func (m *mountState) touchTree(dir, writer string) {
	_ = filepath.WalkDir(m.abs(dir), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if rel, rerr := filepath.Rel(m.dir, p); rerr == nil {
			m.tracker.Touch(filepath.ToSlash(rel), writer)
		}
		return nil
	})
}

var _ = (fusefs.NodeSetattrer)((*node)(nil))

// Setattr covers truncate, chmod, chown and utimes. A read_only memory
// refuses all of them (EPERM), times included: touch must not make a
// protected file look changed. With no OPEN, an open with O_TRUNC arrives
// here too, so this is where `echo > character.md` is refused.
func (n *node) Setattr(ctx context.Context, f fusefs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	rel, ok := n.rel()
	if ok {
		if err := n.checkChange(rel); err != nil {
			return toErrno(n.m.log, "setattr", err)
		}
	}
	if n.m.fw != nil && ok {
		return n.fwSetattr(ctx, rel, in, out)
	}
	if size, sizeSet := in.GetSize(); ok && sizeSet {
		if err := n.m.tracker.Truncate(rel, int64(size)); err != nil {
			return toErrno(n.m.log, "truncate "+rel, err)
		}
	}
	if h, isOurs := f.(*handle); isOurs {
		f = h.LoopbackFile
	} else if h, isOurs := f.(handleNoPassthrough); isOurs {
		f = h.LoopbackFile
	}
	if errno := n.LoopbackNode.Setattr(ctx, f, in, out); errno != 0 {
		return errno
	}
	_, sizeSet := in.GetSize()
	_, modeSet := in.GetMode()
	if ok && (sizeSet || modeSet) {
		n.m.wrote(rel, n.m.callers.of(ctx))
	}
	if ok {
		n.m.fixMode(rel, &out.Attr)
	}
	return 0
}

var _ = (fusefs.NodeSymlinker)((*node)(nil))

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	rel, err := n.checkNew(name)
	if err != nil {
		return nil, toErrno(n.m.log, "symlink", err)
	}
	in, errno := n.LoopbackNode.Symlink(ctx, target, name, out)
	if errno == 0 {
		n.m.own.mark(n.m.abs(rel), rel)
		n.m.changed(rel, n.m.callers.of(ctx))
	}
	return in, errno
}

var _ = (fusefs.NodeLinker)((*node)(nil))

// Link refuses hard links: git cannot represent them, and a second name
// for a memory would diverge into a copy at the first commit.
func (n *node) Link(ctx context.Context, target fusefs.InodeEmbedder, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	if _, err := n.checkNew(name); err != nil {
		return nil, toErrno(n.m.log, "link", err)
	}
	return nil, toErrno(n.m.log, "link", errHardLink)
}

var _ = (fusefs.NodeMknoder)((*node)(nil))

// Mknod refuses device files and fifos, which git cannot store.
func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	if _, err := n.checkNew(name); err != nil {
		return nil, toErrno(n.m.log, "mknod", err)
	}
	return nil, toErrno(n.m.log, "mknod", errSpecialFile)
}

var _ = (fusefs.NodeTmpfiler)((*node)(nil))

// Tmpfile refuses O_TMPFILE: the only way to give such a file a name is a
// hard link, which we refuse; callers fall back to a named temp file.
func (n *node) Tmpfile(ctx context.Context, flags uint32, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, fusefs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, toErrno(n.m.log, "tmpfile", errTmpfile)
}

var _ = (fusefs.NodeSetxattrer)((*node)(nil))

func (n *node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	if err := n.xattrChange(); err != nil {
		return toErrno(n.m.log, "setxattr", err)
	}
	return n.LoopbackNode.Setxattr(ctx, attr, data, flags)
}

var _ = (fusefs.NodeRemovexattrer)((*node)(nil))

func (n *node) Removexattr(ctx context.Context, attr string) syscall.Errno {
	if err := n.xattrChange(); err != nil {
		return toErrno(n.m.log, "removexattr", err)
	}
	return n.LoopbackNode.Removexattr(ctx, attr)
}

// xattrChange is the policy for extended attributes: as for any change,
// but always EPERM (what setxattr(2) says for a protected file).
func (n *node) xattrChange() error {
	rel, ok := n.rel()
	if !ok {
		return errXattr
	}
	if err := n.checkChange(rel); err != nil {
		if errors.Is(err, errTeamReadOnly) {
			return err
		}
		return errXattr
	}
	return nil
}
