package mount

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	fusefs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/fs/gitrepo"
	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph/team"
)

// Forwarder hands a member's change of a team's file to the team's one
// writer (under serve, the team worker over its socket): the file's whole
// new content, or its removal, each with the blob id (gitrepo.BlobID) of
// the version the member started from ("" for none). Its error maps to an
// errno (toErrno): team.ErrReadOnly EROFS, the gate's reasons theirs.
type Forwarder interface {
	Put(ctx context.Context, rel, base string, data []byte) error
	Remove(ctx context.Context, rel, base string) error
}

// forwarding is a team's subtree that a member may change but not write
// (a serve member's worker reads the team's tree through its group): a
// file written through the mount is staged in a folder of the worker's
// own (never in the team's tree), from the version it had when the first
// change came, and forwarded whole with that version's blob id when a
// descriptor of it is closed (FLUSH). The team's writer commits it,
// merges it with what changed meanwhile, or makes it a proposal.
type forwarding struct {
	to  Forwarder
	dir string // the staging folder: the worker's, 0700

	mu     sync.Mutex
	staged map[string]*stage
	seq    uint64 // numbers new files' inodes
}

// stage is one staged file: its content so far and where it started.
type stage struct {
	f    *os.File
	base string // the blob id of the version it started from ("": none)
	// written: a WRITE came. A close before the first WRITE (a shell's
	// > opens with O_TRUNC, then closes the descriptor it dup'ed) does
	// not forward the truncated file; a truncation no WRITE follows is
	// forwarded truncateWait later (truncate -s 0).
	written bool
}

// truncateWait is how long a truncation no WRITE follows waits before it
// is forwarded by itself.
const truncateWait = time.Second

// forwardGate is the write policy of a forwarding team: the member's
// role (read refuses with EROFS), and nothing more here: the team's
// writer runs the gate on what is forwarded.
type forwardGate struct {
	readOnlyTeam
	role team.Role
}

func (g forwardGate) check() error {
	if !g.role.Mutates() {
		return errTeamReadOnly
	}
	return nil
}

func (g forwardGate) CanChange(rel string, _ tracker.Scope) error {
	if rel == ".git" || len(rel) > 4 && rel[:5] == ".git/" {
		return tracker.ErrGitDir
	}
	return g.check()
}
func (g forwardGate) CanCreate(rel string, s tracker.Scope) error { return g.CanChange(rel, s) }
func (g forwardGate) Grow(string, int64) error                    { return g.check() }
func (g forwardGate) Truncate(string, int64) error                { return g.check() }
func (g forwardGate) AppendRoom(string, int64) error              { return g.check() }
func (g forwardGate) Status() []byte {
	return []byte("forwarding: changes go to the team's writer\n")
}

// open returns rel's stage, making it from the team's current version
// on the first change. m.fw.mu is held.
func (m *mountState) stageOf(rel string) (*stage, error) {
	if s := m.fw.staged[rel]; s != nil {
		return s, nil
	}
	cur, err := m.readBacking(rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := os.CreateTemp(m.fw.dir, "stage-")
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // only the descriptor: nothing to clean after a crash
	s := &stage{f: f}
	if cur != nil {
		s.base = gitrepo.BlobID(cur)
		if _, err := f.Write(cur); err != nil {
			f.Close()
			return nil, err
		}
	}
	m.fw.staged[rel] = s
	return s, nil
}

// readBacking reads rel from the team's tree (fs.ErrNotExist: none).
func (m *mountState) readBacking(rel string) ([]byte, error) {
	fd, errno := m.openFd(rel, syscall.O_RDONLY)
	if errno == syscall.ENOENT {
		return nil, fs.ErrNotExist
	}
	if errno != 0 {
		return nil, errno
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, tracker.MaxFile+1))
}

// fwWrite stages a WRITE: at off, or at the stage's end for an append.
func (m *mountState) fwWrite(rel string, data []byte, off int64, appending bool) (uint32, syscall.Errno) {
	m.fw.mu.Lock()
	defer m.fw.mu.Unlock()
	s, err := m.stageOf(rel)
	if err != nil {
		return 0, toErrno(m.log, "stage "+rel, err)
	}
	if appending {
		st, err := s.f.Stat()
		if err != nil {
			return 0, toErrno(m.log, "stage "+rel, err)
		}
		off = st.Size()
	}
	if off+int64(len(data)) > tracker.MaxFile {
		return 0, syscall.EFBIG
	}
	s.written = true
	k, err := s.f.WriteAt(data, off)
	if err != nil {
		return uint32(k), toErrno(m.log, "stage "+rel, err)
	}
	return uint32(k), 0
}

// fwTruncate stages a truncation (an open with O_TRUNC, truncate(1)).
func (m *mountState) fwTruncate(rel string, size int64) syscall.Errno {
	if size > tracker.MaxFile {
		return syscall.EFBIG
	}
	m.fw.mu.Lock()
	defer m.fw.mu.Unlock()
	s, err := m.stageOf(rel)
	if err == nil {
		err = s.f.Truncate(size)
	}
	if err == nil && !s.written {
		time.AfterFunc(truncateWait, func() { m.fwTruncated(rel, s) })
	}
	return toErrno(m.log, "stage "+rel, err)
}

// fwTruncated forwards stage s of rel if it is still rel's and no WRITE
// came since its truncation: nobody closes it otherwise.
func (m *mountState) fwTruncated(rel string, s *stage) {
	m.fw.mu.Lock()
	still := m.fw.staged[rel] == s && !s.written
	m.fw.mu.Unlock()
	if still && m.fwFlushIf(context.Background(), rel, s) != 0 {
		m.log.Warn("a truncation under shared/ was refused by the team's writer", "path", rel)
	}
}

// fwSize is a staged file's size (ok false: rel is not staged).
func (m *mountState) fwSize(rel string) (uint64, bool) {
	m.fw.mu.Lock()
	defer m.fw.mu.Unlock()
	s := m.fw.staged[rel]
	if s == nil {
		return 0, false
	}
	st, err := s.f.Stat()
	if err != nil {
		return 0, false
	}
	return uint64(st.Size()), true
}

// fwRead reads a staged file (ok false: rel is not staged).
func (m *mountState) fwRead(rel string, dest []byte, off int64) (fuse.ReadResult, bool, syscall.Errno) {
	m.fw.mu.Lock()
	defer m.fw.mu.Unlock()
	s := m.fw.staged[rel]
	if s == nil {
		return nil, false, 0
	}
	k, err := s.f.ReadAt(dest, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, true, toErrno(m.log, "stage "+rel, err)
	}
	return fuse.ReadResultData(dest[:k]), true, 0
}

// fwFlush forwards rel's stage, if any, whole with its base (a close of
// one of its descriptors), and drops it whatever the answer: a refused
// change is not kept to be sent again. The kernel's caches of rel are
// dropped: the team's writer may have merged in others' changes.
func (m *mountState) fwFlush(ctx context.Context, rel string) syscall.Errno {
	return m.fwFlushIf(ctx, rel, nil)
}

// fwFlushIf is fwFlush of rel's stage when it is want (nil: any written
// one; a stage only truncated waits for its WRITE or truncateWait).
func (m *mountState) fwFlushIf(ctx context.Context, rel string, want *stage) syscall.Errno {
	m.fw.mu.Lock()
	s := m.fw.staged[rel]
	if s == nil || (want == nil && !s.written) || (want != nil && s != want) || tracker.IsScratch(rel) {
		// A scratch file (sed -i's temporary, an editor's swap) is never
		// committed: it stays staged until it is renamed over a memory
		// (fwRename) or removed.
		m.fw.mu.Unlock()
		return 0
	}
	delete(m.fw.staged, rel)
	m.fw.mu.Unlock()
	defer s.f.Close()
	st, err := s.f.Stat()
	if err != nil {
		return toErrno(m.log, "stage "+rel, err)
	}
	data := make([]byte, st.Size())
	if _, err := s.f.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return toErrno(m.log, "stage "+rel, err)
	}
	err = m.fw.to.Put(ctx, rel, s.base, data)
	m.inval.pathsLater([]string{rel})
	if err != nil {
		return toErrno(m.log, "forward "+rel, err)
	}
	return 0
}

// fwRemove forwards the removal of rel, from its current version.
func (m *mountState) fwRemove(ctx context.Context, rel string) syscall.Errno {
	m.fw.mu.Lock()
	s := m.fw.staged[rel]
	if s != nil {
		delete(m.fw.staged, rel)
		s.f.Close()
	}
	m.fw.mu.Unlock()
	cur, err := m.readBacking(rel)
	if errors.Is(err, fs.ErrNotExist) && s != nil {
		return 0 // staged only (a scratch file, a new file not yet sent)
	}
	if err != nil {
		return toErrno(m.log, "unlink "+rel, err)
	}
	err = m.fw.to.Remove(ctx, rel, gitrepo.BlobID(cur))
	m.inval.pathsLater([]string{rel})
	return toErrno(m.log, "forward unlink "+rel, err)
}

// newForwarding checks a forwarding team's staging folder: a folder of
// this process's uid that nobody else may enter.
func newForwarding(t Team) (*forwarding, error) {
	var st unix.Stat_t
	if err := unix.Lstat(t.StageDir, &st); err != nil {
		return nil, fmt.Errorf("team %s: staging folder: %w", t.Name, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid != uint32(os.Geteuid()) || st.Mode&0o077 != 0 {
		return nil, fmt.Errorf("team %s: staging folder %s is not this process's own 0700 folder", t.Name, t.StageDir)
	}
	return &forwarding{to: t.Forward, dir: t.StageDir, staged: map[string]*stage{}}, nil
}

// fwSetattr is Setattr in a forwarding team: a new size is staged; the
// rest (modes, times) is not the team's to take from a member and is
// left as it is; the answer is the file's attributes.
func (n *node) fwSetattr(ctx context.Context, rel string, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok {
		if errno := n.m.fwTruncate(rel, int64(size)); errno != 0 {
			return errno
		}
	}
	return n.Getattr(ctx, nil, out)
}

// fwCreate makes a new file in a forwarding team: staged empty (no base),
// a node of its own until the team's writer writes the file; forwarded
// at the first close after a WRITE, or truncateWait after the create
// when none comes (touch).
func (n *node) fwCreate(ctx context.Context, rel string, out *fuse.EntryOut) (*fusefs.Inode, fusefs.FileHandle, uint32, syscall.Errno) {
	m := n.m
	m.fw.mu.Lock()
	if m.fw.staged[rel] != nil {
		m.fw.mu.Unlock()
		return nil, nil, 0, syscall.EEXIST
	}
	f, err := os.CreateTemp(m.fw.dir, "stage-")
	if err != nil {
		m.fw.mu.Unlock()
		return nil, nil, 0, toErrno(m.log, "stage "+rel, err)
	}
	os.Remove(f.Name())
	s := &stage{f: f}
	m.fw.staged[rel] = s
	m.fw.seq++
	ino := m.inoSalt | synthInoBase>>1 | m.fw.seq
	m.fw.mu.Unlock()
	time.AfterFunc(truncateWait, func() { m.fwTruncated(rel, s) })
	ch := &node{LoopbackNode: &fusefs.LoopbackNode{RootData: n.RootData}, m: m}
	in := n.NewInode(ctx, ch, fusefs.StableAttr{Mode: syscall.S_IFREG, Ino: ino})
	out.Attr = fuse.Attr{Mode: syscall.S_IFREG | 0o644, Ino: ino, Nlink: 1}
	m.present(&out.Attr)
	m.revocableEntry(out)
	return in, nil, 0, 0
}

// fwStagedAttr answers Getattr of a file staged but not yet in the
// team's tree (a new file): its size so far.
func (m *mountState) fwStagedAttr(rel string, out *fuse.AttrOut) bool {
	size, ok := m.fwSize(rel)
	if !ok {
		return false
	}
	out.Attr = fuse.Attr{Mode: syscall.S_IFREG | 0o644, Size: size, Nlink: 1}
	m.present(&out.Attr)
	return true
}

// fwRename renames in a forwarding team. A staged file renamed over rel
// (sed -i's temporary, an editor's write-then-rename) is forwarded as
// newRel's new content, from the version newRel has now. Any other rename
// is EXDEV: mv then copies and removes, each change forwarded by itself
// (git has no move the team's writer could take whole from a member).
func (m *mountState) fwRename(ctx context.Context, oldRel, newRel string, flags uint32) syscall.Errno {
	m.fw.mu.Lock()
	s := m.fw.staged[oldRel]
	if s == nil || flags != 0 || m.fw.staged[newRel] != nil {
		m.fw.mu.Unlock()
		return syscall.EXDEV
	}
	delete(m.fw.staged, oldRel)
	m.fw.mu.Unlock()
	defer s.f.Close()
	data, err := io.ReadAll(io.NewSectionReader(s.f, 0, tracker.MaxFile+1))
	if err != nil {
		return toErrno(m.log, "stage "+oldRel, err)
	}
	base := ""
	cur, err := m.readBacking(newRel)
	switch {
	case err == nil:
		base = gitrepo.BlobID(cur)
	case !errors.Is(err, fs.ErrNotExist):
		return toErrno(m.log, "rename "+newRel, err)
	}
	err = m.fw.to.Put(ctx, newRel, base, data)
	m.inval.pathsLater([]string{oldRel, newRel})
	return toErrno(m.log, "forward "+newRel, err)
}
