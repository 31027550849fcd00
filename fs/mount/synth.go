package mount

import (
	"bytes"
	"context"
	"hash/fnv"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/team"
)

// Inode numbers of virtual files live far above any backing st_ino.
const (
	synthInoBase  = 1 << 62
	searchInoBase = synthInoBase | 1<<61
)

// synthFile is a read-only file the daemon makes up: an index, CONTEXT.md,
// the status report or one search result.
//
// Without OPEN (the default) its bytes are generated on GETATTR and READ
// (cached by the graph per version), and its mtime moves whenever they
// change. The kernel trusts its attributes for a nanosecond only and was
// told to invalidate cached pages when a file's mtime or size changes
// (FUSE_AUTO_INVAL_DATA, go-fuse's default): every read asks for the
// attributes first, so `echo >> f; cat user_memory.md` sees the change
// without the daemon invalidating anything from a request handler, where
// NotifyContent can deadlock against a read of the same file waiting for
// a free request reader (libfuse documents the same rule for
// fuse_lowlevel_notify_inval_inode). Before generating, paths written
// since the last read are folded into the graph (foldDirty).
//
// With Options.OpenEachFile, an open snapshots the bytes for its handle
// and reads bypass the page cache (direct I/O).

type synthFile struct {
	fusefs.Inode
	gen    func() []byte
	fold   func()                          // brings what gen reads up to date; nil for nothing
	fill   func(a *fuse.Attr, size uint64) // mode, owner and times at size bytes
	noOpen bool                            // OPEN is answered with ENOSYS
	log    *slog.Logger

	mu    sync.Mutex
	last  []byte
	mtime time.Time
}

// synthFile makes the mount's synthesized file of gen: 0444, owned like the
// mount, folding paths written since the last read into the graph first.
func (m *mountState) synthFile(gen func() []byte) *synthFile {
	return &synthFile{
		gen:    gen,
		fold:   m.foldDirty,
		fill:   func(a *fuse.Attr, size uint64) { m.fillSynthAttr(a, size, 0o444) },
		noOpen: m.opt.noOpen(),
		log:    m.log,
	}
}

// current returns the file's bytes now and the time they last changed.
func (f *synthFile) current() ([]byte, time.Time) {
	if f.fold != nil {
		f.fold()
	}
	b := f.gen()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mtime.IsZero() || !sameBytes(b, f.last) {
		now := time.Now()
		if !now.After(f.mtime) {
			now = f.mtime.Add(time.Nanosecond)
		}
		f.last, f.mtime = b, now
	}
	return f.last, f.mtime
}

// attr fills the attributes of the file as it reads now.
func (f *synthFile) attr(a *fuse.Attr) {
	b, mtime := f.current()
	f.fill(a, uint64(len(b)))
	a.SetTimes(nil, &mtime, &mtime)
}

// sameBytes is bytes.Equal with a shortcut for the graph's cached slices.
func sameBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	return bytes.Equal(a, b)
}

var _ = (fusefs.NodeGetattrer)((*synthFile)(nil))

func (f *synthFile) Getattr(ctx context.Context, fh fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if h, ok := fh.(*synthHandle); ok {
		f.fill(&out.Attr, uint64(len(h.data)))
	} else {
		f.attr(&out.Attr)
	}
	out.SetTimeout(time.Nanosecond) // zero would mean "the mount default"
	return 0
}

var _ = (fusefs.NodeOpener)((*synthFile)(nil))

// Open snapshots the content for this handle (OpenEachFile only).
func (f *synthFile) Open(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	if f.noOpen {
		return nil, 0, syscall.ENOSYS
	}
	if flags&writeFlags != 0 {
		return nil, 0, toErrno(f.log, "open", tracker.ErrSynthesized)
	}
	return &synthHandle{data: f.gen()}, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
}

var _ = (fusefs.NodeReader)((*synthFile)(nil))

func (f *synthFile) Read(ctx context.Context, fh fusefs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if h, ok := fh.(*synthHandle); ok {
		return h.Read(ctx, dest, off)
	}
	b, _ := f.current()
	return readAt(b, dest, off), 0
}

var _ = (fusefs.NodeWriter)((*synthFile)(nil))

// Write refuses: the content is the daemon's (EACCES).
func (f *synthFile) Write(ctx context.Context, fh fusefs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	return 0, toErrno(f.log, "write", tracker.ErrSynthesized)
}

var _ = (fusefs.NodeFlusher)((*synthFile)(nil))

func (f *synthFile) Flush(ctx context.Context, fh fusefs.FileHandle) syscall.Errno {
	if fh == nil {
		return syscall.ENOSYS // see node.Flush
	}
	return 0
}

var _ = (fusefs.NodeSetattrer)((*synthFile)(nil))

// Setattr refuses: the content is the daemon's (EACCES).
func (f *synthFile) Setattr(ctx context.Context, fh fusefs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return toErrno(f.log, "setattr", tracker.ErrSynthesized)
}

// synthHandle is one open of a synthesized file: the bytes as of open.
type synthHandle struct{ data []byte }

var _ = (fusefs.FileReader)((*synthHandle)(nil))

func (h *synthHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return readAt(h.data, dest, off), 0
}

// readAt serves a read of data at off.
func readAt(data, dest []byte, off int64) fuse.ReadResult {
	if off >= int64(len(data)) {
		return fuse.ReadResultData(nil)
	}
	end := off + int64(len(dest))
	if end > int64(len(data)) {
		end = int64(len(data))
	}
	return fuse.ReadResultData(data[off:end])
}

var _ = (fusefs.FileGetattrer)((*synthHandle)(nil))

func (h *synthHandle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	out.Size = uint64(len(h.data))
	return 0
}

// searchDir is .mindmount/search: any name looked up in it is a query, and the
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
	f := d.m.synthFile(func() []byte { return d.m.renderSearch(q) })
	h := fnv.New64a()
	h.Write([]byte(name))
	in := d.NewInode(ctx, f, fusefs.StableAttr{Mode: syscall.S_IFREG, Ino: searchInoBase | (h.Sum64()^d.m.inoSalt)>>3})
	if known, ok := in.Operations().(*synthFile); ok {
		f = known // the same query looked up before
	}
	f.attr(&out.Attr)
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

// controlFile is .mindmount/consolidate: writing anything to it asks for a
// consolidation run. It reads as a one-line hint.
type controlFile struct {
	fusefs.Inode
	m *mountState

	mu   sync.Mutex
	last controlWrite // the last WRITE made without a handle
}

// controlWrite is one WRITE to the control file without a handle: its
// caller, the offset it ended at, and when it came.
type controlWrite struct {
	pid uint32
	end int64
	at  time.Time
}

// controlBurst bounds the gap between the WRITEs of one write(2) that the
// kernel split (more than max_write bytes): they come back to back.
const controlBurst = 200 * time.Millisecond

const controlHint = "write anything to this file to request a consolidation run\n"

var _ = (fusefs.NodeGetattrer)((*controlFile)(nil))

func (c *controlFile) Getattr(ctx context.Context, fh fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	c.m.fillSynthAttr(&out.Attr, uint64(len(controlHint)), 0o644)
	return 0
}

var _ = (fusefs.NodeSetattrer)((*controlFile)(nil))

// Setattr accepts the truncation of `echo > .mindmount/consolidate` and
// changes nothing.
func (c *controlFile) Setattr(ctx context.Context, fh fusefs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	c.m.fillSynthAttr(&out.Attr, uint64(len(controlHint)), 0o644)
	return 0
}

var _ = (fusefs.NodeOpener)((*controlFile)(nil))

func (c *controlFile) Open(ctx context.Context, flags uint32) (fusefs.FileHandle, uint32, syscall.Errno) {
	if c.m.opt.noOpen() {
		return nil, 0, syscall.ENOSYS
	}
	return &controlHandle{c: c, synthHandle: synthHandle{data: []byte(controlHint)}}, fuse.FOPEN_DIRECT_IO, 0
}

var _ = (fusefs.NodeReader)((*controlFile)(nil))

func (c *controlFile) Read(ctx context.Context, fh fusefs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return readAt([]byte(controlHint), dest, off), 0
}

var _ = (fusefs.NodeWriter)((*controlFile)(nil))

// Write asks for a consolidation run. The WRITEs of one write(2) the kernel
// split ask once: without a handle (no OPEN), a WRITE by the same process
// at the offset the last one ended, right after it, continues it. Every
// other WRITE asks again, however soon after the last request: a second
// "echo > .mindmount/consolidate" within a second of the first (after a git
// revert, say) was once dropped although the first run had already
// started. An extra request costs nothing while one waits; the
// consolidator coalesces them.
func (c *controlFile) Write(ctx context.Context, fh fusefs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if h, ok := fh.(*controlHandle); ok {
		h.once.Do(c.request)
		return uint32(len(data)), 0
	}
	w := controlWrite{end: off + int64(len(data)), at: time.Now()}
	if caller, ok := fuse.FromContext(ctx); ok && caller != nil {
		w.pid = caller.Pid
	}
	c.mu.Lock()
	cont := off > 0 && off == c.last.end && w.pid == c.last.pid && w.at.Sub(c.last.at) < controlBurst
	c.last = w
	c.mu.Unlock()
	if !cont {
		c.request()
	}
	return uint32(len(data)), 0
}

func (c *controlFile) request() {
	c.m.log.Info("consolidation requested through the mount")
	if c.m.opt.OnConsolidate != nil {
		go c.m.opt.OnConsolidate() // never block the writer on a model
	}
}

var _ = (fusefs.NodeFlusher)((*controlFile)(nil))

func (c *controlFile) Flush(ctx context.Context, fh fusefs.FileHandle) syscall.Errno {
	if fh == nil {
		return syscall.ENOSYS // see node.Flush
	}
	return 0
}

type controlHandle struct {
	synthHandle
	c    *controlFile
	once sync.Once
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
	for i, n := range memgraph.SynthesizedIn(dir) {
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
			ino := uint64(synthInoBase) | m.inoSalt | uint64(len(dir))<<8 | uint64(i)
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
		return m.synthFile(func() []byte { return m.graph.Index(memgraph.KindUser) }), syscall.S_IFREG
	case memgraph.CharIndexFile:
		return m.synthFile(func() []byte { return m.graph.Index(memgraph.KindCharacter) }), syscall.S_IFREG
	case memgraph.ContextFile:
		return m.synthFile(func() []byte { return m.graph.Context(memgraph.ContextOptions{}) }), syscall.S_IFREG
	case memgraph.StatusFile:
		return m.synthFile(m.tracker.Status), syscall.S_IFREG
	case memgraph.StateDir + "/search":
		return &searchDir{m: m}, syscall.S_IFDIR
	case memgraph.IndexDir:
		return &indexDir{m: m}, syscall.S_IFDIR
	case memgraph.FullIndexPath(memgraph.KindUser):
		return m.synthFile(func() []byte { return m.fullIndex(memgraph.KindUser) }), syscall.S_IFREG
	case memgraph.FullIndexPath(memgraph.KindCharacter):
		return m.synthFile(func() []byte { return m.fullIndex(memgraph.KindCharacter) }), syscall.S_IFREG
	default: // .mindmount/consolidate
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
	if dir == "" && len(m.teams) > 0 {
		hide[team.SharedDir] = true
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
		if n == "search" || n == "index" {
			mode = syscall.S_IFDIR
		}
		list = append(list, fuse.DirEntry{Name: n, Mode: mode, Ino: uint64(synthInoBase) | m.inoSalt | uint64(len(dir))<<8 | uint64(i)})
	}
	if hide[team.SharedDir] {
		list = append(list, fuse.DirEntry{Name: team.SharedDir, Mode: syscall.S_IFDIR, Ino: sharedIno})
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

// indexDir is .mindmount/index: the indexes with every memory, whatever the
// budget of user_memory.md and character_memory.md.
type indexDir struct {
	fusefs.Inode
	m *mountState
}

var _ = (fusefs.NodeGetattrer)((*indexDir)(nil))

func (d *indexDir) Getattr(ctx context.Context, fh fusefs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.m.fillSynthAttr(&out.Attr, 0, 0o555|syscall.S_IFDIR)
	return 0
}

var _ = (fusefs.NodeLookuper)((*indexDir)(nil))

func (d *indexDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fusefs.Inode, syscall.Errno) {
	if in := d.m.synthChild(ctx, d.EmbeddedInode(), memgraph.IndexDir, name, out); in != nil {
		return in, 0
	}
	return nil, syscall.ENOENT
}

var _ = (fusefs.NodeReaddirer)((*indexDir)(nil))

func (d *indexDir) Readdir(ctx context.Context) (fusefs.DirStream, syscall.Errno) {
	var list []fuse.DirEntry
	for _, n := range memgraph.SynthesizedIn(memgraph.IndexDir) {
		list = append(list, fuse.DirEntry{Name: n, Mode: syscall.S_IFREG})
	}
	return fusefs.NewListDirStream(list), 0
}

// fullIndexer is the part of *memgraph.Graph that renders the full indexes
// (not part of model, which other mounts' proxies implement).
type fullIndexer interface {
	FullIndex(kind memgraph.Kind) []byte
}

// fullIndex renders .mindmount/index/<index>: every memory of kind.
func (m *mountState) fullIndex(kind memgraph.Kind) []byte {
	if fi, ok := m.graph.(fullIndexer); ok {
		return fi.FullIndex(kind)
	}
	return m.graph.Index(kind)
}
