package fs

import (
	"context"
	"hash/fnv"
	"os"
	"sync"
	"syscall"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/engram-dev/engram/memgraph"
)

// Inode numbers of virtual files live far above any backing st_ino.
const (
	synthInoBase  = 1 << 62
	searchInoBase = synthInoBase | 1<<61
)

// synthFile is a read-only file the daemon makes up: an index, CONTEXT.md,
// the status report or one search result. Its bytes are generated on open
// and stay stable for that open handle; Getattr reports the size of what an
// open would return now, so stat, wc and cat agree.
//
// The kernel caches neither its pages (direct I/O) nor its size (attributes
// expire at once). That costs a round trip per open and stat of a handful of
// small files, and buys read-after-write without invalidating anything from
// a write's close path: NotifyContent there can deadlock against a read of
// the same file waiting for a free request reader (libfuse documents the
// same rule for fuse_lowlevel_notify_inval_inode).
type synthFile struct {
	fusefs.Inode
	m   *mountState
	gen func() []byte
}

var _ = (fusefs.NodeGetattrer)((*synthFile)(nil))

func (f *synthFile) Getattr(ctx context.Context, fh fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	size := 0
	if h, ok := fh.(*synthHandle); ok {
		size = len(h.data)
	} else {
		size = len(f.gen())
	}
	f.m.fillSynthAttr(&out.Attr, uint64(size), 0o444)
	out.SetTimeout(time.Nanosecond) // zero would mean "the mount default"
	return 0
}

var _ = (fusefs.NodeOpener)((*synthFile)(nil))

// Open snapshots the content for this handle.
func (f *synthFile) Open(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	if flags&writeFlags != 0 {
		return nil, 0, syscall.EACCES
	}
	return &synthHandle{data: f.gen()}, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
}

var _ = (fusefs.NodeSetattrer)((*synthFile)(nil))

// Setattr refuses: the content is the daemon's.
func (f *synthFile) Setattr(ctx context.Context, fh fusefs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EPERM
}

// synthHandle is one open of a synthesized file: the bytes as of open.
type synthHandle struct{ data []byte }

var _ = (fusefs.FileReader)((*synthHandle)(nil))

func (h *synthHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= int64(len(h.data)) {
		return fuse.ReadResultData(nil), 0
	}
	end := off + int64(len(dest))
	if end > int64(len(h.data)) {
		end = int64(len(h.data))
	}
	return fuse.ReadResultData(h.data[off:end]), 0
}

var _ = (fusefs.FileGetattrer)((*synthHandle)(nil))

func (h *synthHandle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	out.Size = uint64(len(h.data))
	return 0
}

// searchDir is .engram/search: any name looked up in it is a query, and the
// file's content is the recall ranking for it. Listing it shows nothing.
type searchDir struct {
	fusefs.Inode
	m *mountState
}

var _ = (fusefs.NodeGetattrer)((*searchDir)(nil))

func (d *searchDir) Getattr(ctx context.Context, fh fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.m.fillSynthAttr(&out.Attr, 0, 0o555|syscall.S_IFDIR)
	return 0
}

var _ = (fusefs.NodeLookuper)((*searchDir)(nil))

func (d *searchDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	q := name
	f := &synthFile{m: d.m, gen: func() []byte { return d.m.renderSearch(q) }}
	h := fnv.New64a()
	h.Write([]byte(name))
	in := d.NewInode(ctx, f, fusefs.StableAttr{Mode: syscall.S_IFREG, Ino: searchInoBase | h.Sum64()>>3})
	d.m.fillSynthAttr(&out.Attr, uint64(len(f.gen())), 0o444)
	// Every look is a new query: never cache the entry or its size.
	out.SetEntryTimeout(time.Nanosecond)
	out.SetAttrTimeout(time.Nanosecond)
	return in, 0
}

var _ = (fusefs.NodeReaddirer)((*searchDir)(nil))

func (d *searchDir) Readdir(ctx context.Context) (fusefs.DirStream, syscall.Errno) {
	return fusefs.NewListDirStream(nil), 0
}

var _ = (fusefs.NodeCreater)((*searchDir)(nil))

func (d *searchDir) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fusefs.Inode, fusefs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EACCES
}

// controlFile is .engram/consolidate: writing anything to it asks for a
// consolidation run. It reads as a one-line hint.
type controlFile struct {
	fusefs.Inode
	m *mountState
}

const controlHint = "write anything to this file to request a consolidation run\n"

var _ = (fusefs.NodeGetattrer)((*controlFile)(nil))

func (c *controlFile) Getattr(ctx context.Context, fh fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	c.m.fillSynthAttr(&out.Attr, uint64(len(controlHint)), 0o644)
	return 0
}

var _ = (fusefs.NodeSetattrer)((*controlFile)(nil))

// Setattr accepts the truncation of `echo > .engram/consolidate` and
// changes nothing.
func (c *controlFile) Setattr(ctx context.Context, fh fusefs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	c.m.fillSynthAttr(&out.Attr, uint64(len(controlHint)), 0o644)
	return 0
}

var _ = (fusefs.NodeOpener)((*controlFile)(nil))

func (c *controlFile) Open(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	return &controlHandle{m: c.m, synthHandle: synthHandle{data: []byte(controlHint)}}, fuse.FOPEN_DIRECT_IO, 0
}

type controlHandle struct {
	synthHandle
	m    *mountState
	once sync.Once
}

var _ = (fusefs.FileWriter)((*controlHandle)(nil))

func (h *controlHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	h.once.Do(func() {
		h.m.log.Info("consolidation requested through the mount")
		if h.m.opt.OnConsolidate != nil {
			go h.m.opt.OnConsolidate() // never block the writer on a model
		}
	})
	return uint32(len(data)), 0
}

// fillSynthAttr gives a virtual file the owner of the backing tree, so the
// mount looks like one user's directory.
func (m *mountState) fillSynthAttr(a *fuse.Attr, size uint64, mode uint32) {
	if mode&syscall.S_IFMT == 0 {
		mode |= syscall.S_IFREG
	}
	a.Mode = mode
	a.Size = size
	a.Blocks = (size + 511) / 512
	a.Nlink = 1
	if mode&syscall.S_IFDIR != 0 {
		a.Nlink = 2
	}
	a.Owner = m.owner
	t := m.started
	a.SetTimes(&t, &t, &t)
}

// synthChild returns the virtual inode called name in directory dir, or nil
// when name is not virtual there.
func (m *mountState) synthChild(ctx context.Context, parent *fusefs.Inode, dir, name string, out *fuse.EntryOut) *fusefs.Inode {
	names, ok := synthNames[dir]
	if !ok {
		return nil
	}
	for i, n := range names {
		if n != name {
			continue
		}
		rel := name
		if dir != "" {
			rel = dir + "/" + name
		}
		m.synthMu.Lock()
		in := m.synth[rel]
		if in == nil {
			ops, mode := m.newSynth(rel)
			ino := uint64(synthInoBase) | uint64(len(dir))<<8 | uint64(i)
			in = parent.NewPersistentInode(ctx, ops, fusefs.StableAttr{Mode: mode, Ino: ino})
			m.synth[rel] = in
		}
		m.synthMu.Unlock()
		var a fuse.AttrOut
		if ga, ok := in.Operations().(fusefs.NodeGetattrer); ok {
			ga.Getattr(ctx, nil, &a)
		}
		out.Attr = a.Attr
		if a.Timeout() > 0 && a.Timeout() < time.Second {
			out.SetAttrTimeout(a.Timeout())
		}
		return in
	}
	return nil
}

func (m *mountState) newSynth(rel string) (fusefs.InodeEmbedder, uint32) {
	switch rel {
	case memgraph.UserIndexFile:
		return &synthFile{m: m, gen: func() []byte { return m.graph.Index(memgraph.KindUser) }}, syscall.S_IFREG
	case memgraph.CharIndexFile:
		return &synthFile{m: m, gen: func() []byte { return m.graph.Index(memgraph.KindCharacter) }}, syscall.S_IFREG
	case memgraph.ContextFile:
		return &synthFile{m: m, gen: func() []byte { return m.graph.Context(memgraph.ContextOptions{}) }}, syscall.S_IFREG
	case memgraph.StatusFile:
		return &synthFile{m: m, gen: m.tracker.Status}, syscall.S_IFREG
	case memgraph.StateDir + "/search":
		return &searchDir{m: m}, syscall.S_IFDIR
	default: // .engram/consolidate
		return &controlFile{m: m}, syscall.S_IFREG
	}
}

// mergeSynth lists a directory's backing entries plus its virtual files (a
// backing file of the same name is hidden, as Lookup hides it).
func (m *mountState) mergeSynth(ds fusefs.DirStream, dir string, names []string) fusefs.FileHandle {
	defer ds.Close()
	hide := map[string]bool{}
	for _, n := range names {
		hide[n] = true
	}
	var list []fuse.DirEntry
	for ds.HasNext() {
		e, errno := ds.Next()
		if errno != 0 {
			break
		}
		if !hide[e.Name] {
			list = append(list, e)
		}
	}
	for i, n := range names {
		mode := uint32(syscall.S_IFREG)
		if n == "search" {
			mode = syscall.S_IFDIR
		}
		list = append(list, fuse.DirEntry{Name: n, Mode: mode, Ino: uint64(synthInoBase) | uint64(len(dir))<<8 | uint64(i)})
	}
	return fusefs.NewListDirStream(list).(fusefs.FileHandle)
}

// backingOwner reads the uid/gid of the backing root.
func backingOwner(dir string) fuse.Owner {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return fuse.Owner{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())}
	}
	return fuse.Owner{Uid: st.Uid, Gid: st.Gid}
}
