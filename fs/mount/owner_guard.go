package mount

import "github.com/hanwen/go-fuse/v2/fuse"

// ownerGuard stands in front of a per-user mount (mindmount serve's worker)
// and refuses with EACCES every request from a caller that is neither the
// mount's owner nor root, whatever the kernel's permission checks decided:
// the daemon's own check, under the kernel's (default_permissions and the
// owner's 0700 top). Requests without a caller (FORGET, RELEASE, INIT) pass.
// The methods below are one pattern, one per request of go-fuse's
// RawFileSystem.
type ownerGuard struct {
	fuse.RawFileSystem
	uid uint32
}

func (g *ownerGuard) allowed(h *fuse.InHeader) bool {
	return h.Caller.Uid == g.uid || h.Caller.Uid == 0
}

func (g *ownerGuard) Lookup(cancel <-chan struct{}, header *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	if !g.allowed(header) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Lookup(cancel, header, name, out)
}

func (g *ownerGuard) GetAttr(cancel <-chan struct{}, input *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.GetAttr(cancel, input, out)
}

func (g *ownerGuard) SetAttr(cancel <-chan struct{}, input *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.SetAttr(cancel, input, out)
}

func (g *ownerGuard) Mknod(cancel <-chan struct{}, input *fuse.MknodIn, name string, out *fuse.EntryOut) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Mknod(cancel, input, name, out)
}

func (g *ownerGuard) Mkdir(cancel <-chan struct{}, input *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Mkdir(cancel, input, name, out)
}

func (g *ownerGuard) Unlink(cancel <-chan struct{}, header *fuse.InHeader, name string) fuse.Status {
	if !g.allowed(header) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Unlink(cancel, header, name)
}

func (g *ownerGuard) Rmdir(cancel <-chan struct{}, header *fuse.InHeader, name string) fuse.Status {
	if !g.allowed(header) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Rmdir(cancel, header, name)
}

func (g *ownerGuard) Rename(cancel <-chan struct{}, input *fuse.RenameIn, oldName string, newName string) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Rename(cancel, input, oldName, newName)
}

func (g *ownerGuard) Link(cancel <-chan struct{}, input *fuse.LinkIn, filename string, out *fuse.EntryOut) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Link(cancel, input, filename, out)
}

func (g *ownerGuard) Symlink(cancel <-chan struct{}, header *fuse.InHeader, pointedTo string, linkName string, out *fuse.EntryOut) fuse.Status {
	if !g.allowed(header) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Symlink(cancel, header, pointedTo, linkName, out)
}

func (g *ownerGuard) Readlink(cancel <-chan struct{}, header *fuse.InHeader) ([]byte, fuse.Status) {
	if !g.allowed(header) {
		return nil, fuse.EACCES
	}
	return g.RawFileSystem.Readlink(cancel, header)
}

func (g *ownerGuard) Access(cancel <-chan struct{}, input *fuse.AccessIn) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Access(cancel, input)
}

func (g *ownerGuard) GetXAttr(cancel <-chan struct{}, header *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	if !g.allowed(header) {
		return 0, fuse.EACCES
	}
	return g.RawFileSystem.GetXAttr(cancel, header, attr, dest)
}

func (g *ownerGuard) ListXAttr(cancel <-chan struct{}, header *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	if !g.allowed(header) {
		return 0, fuse.EACCES
	}
	return g.RawFileSystem.ListXAttr(cancel, header, dest)
}

func (g *ownerGuard) SetXAttr(cancel <-chan struct{}, input *fuse.SetXAttrIn, attr string, data []byte) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.SetXAttr(cancel, input, attr, data)
}

func (g *ownerGuard) RemoveXAttr(cancel <-chan struct{}, header *fuse.InHeader, attr string) fuse.Status {
	if !g.allowed(header) {
		return fuse.EACCES
	}
	return g.RawFileSystem.RemoveXAttr(cancel, header, attr)
}

func (g *ownerGuard) Create(cancel <-chan struct{}, input *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Create(cancel, input, name, out)
}

func (g *ownerGuard) Tmpfile(cancel <-chan struct{}, input *fuse.CreateIn, out *fuse.CreateOut) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Tmpfile(cancel, input, out)
}

func (g *ownerGuard) Open(cancel <-chan struct{}, input *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Open(cancel, input, out)
}

func (g *ownerGuard) Read(cancel <-chan struct{}, input *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	if !g.allowed(&input.InHeader) {
		return nil, fuse.EACCES
	}
	return g.RawFileSystem.Read(cancel, input, buf)
}

func (g *ownerGuard) Lseek(cancel <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	if !g.allowed(&in.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Lseek(cancel, in, out)
}

func (g *ownerGuard) GetLk(cancel <-chan struct{}, input *fuse.LkIn, out *fuse.LkOut) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.GetLk(cancel, input, out)
}

func (g *ownerGuard) SetLk(cancel <-chan struct{}, input *fuse.LkIn) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.SetLk(cancel, input)
}

func (g *ownerGuard) SetLkw(cancel <-chan struct{}, input *fuse.LkIn) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.SetLkw(cancel, input)
}

func (g *ownerGuard) Write(cancel <-chan struct{}, input *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	if !g.allowed(&input.InHeader) {
		return 0, fuse.EACCES
	}
	return g.RawFileSystem.Write(cancel, input, data)
}

func (g *ownerGuard) Writev(cancel <-chan struct{}, input *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	if !g.allowed(&input.InHeader) {
		return 0, fuse.EACCES
	}
	return g.RawFileSystem.Writev(cancel, input, data)
}

func (g *ownerGuard) CopyFileRange(cancel <-chan struct{}, input *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	if !g.allowed(&input.InHeader) {
		return 0, fuse.EACCES
	}
	return g.RawFileSystem.CopyFileRange(cancel, input)
}

func (g *ownerGuard) Ioctl(cancel <-chan struct{}, input *fuse.IoctlIn, inbuf []byte, output *fuse.IoctlOut, outbuf []byte) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Ioctl(cancel, input, inbuf, output, outbuf)
}

func (g *ownerGuard) Flush(cancel <-chan struct{}, input *fuse.FlushIn) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Flush(cancel, input)
}

func (g *ownerGuard) Fsync(cancel <-chan struct{}, input *fuse.FsyncIn) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Fsync(cancel, input)
}

func (g *ownerGuard) Fallocate(cancel <-chan struct{}, input *fuse.FallocateIn) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Fallocate(cancel, input)
}

func (g *ownerGuard) OpenDir(cancel <-chan struct{}, input *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.OpenDir(cancel, input, out)
}

func (g *ownerGuard) ReadDir(cancel <-chan struct{}, input *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.ReadDir(cancel, input, out)
}

func (g *ownerGuard) ReadDirPlus(cancel <-chan struct{}, input *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.ReadDirPlus(cancel, input, out)
}

func (g *ownerGuard) FsyncDir(cancel <-chan struct{}, input *fuse.FsyncIn) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.FsyncDir(cancel, input)
}

func (g *ownerGuard) StatFs(cancel <-chan struct{}, input *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	if !g.allowed(input) {
		return fuse.EACCES
	}
	return g.RawFileSystem.StatFs(cancel, input, out)
}

func (g *ownerGuard) Statx(cancel <-chan struct{}, input *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	if !g.allowed(&input.InHeader) {
		return fuse.EACCES
	}
	return g.RawFileSystem.Statx(cancel, input, out)
}
