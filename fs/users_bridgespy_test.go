package fs

import (
	"slices"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// bridgeSpy stands in for go-fuse's bridge behind the guard: it answers
// every request (a new node ID per entry, attributes owned by root, as the
// backing files of a daemon running as root are) and records which
// requests reached it. No mount, no root, no other uid is needed: each
// request's caller is set by hand, as the kernel sets it.
type bridgeSpy struct {
	fuse.RawFileSystem // ENOSYS for anything not below

	mu     sync.Mutex
	next   uint64
	passed []string
}

func (s *bridgeSpy) pass(op string) {
	s.mu.Lock()
	s.passed = append(s.passed, op)
	s.mu.Unlock()
}

// reached reports whether op reached the bridge since the last call, and
// forgets what did.
func (s *bridgeSpy) reached(op string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := slices.Contains(s.passed, op)
	s.passed = nil
	return ok
}

func (s *bridgeSpy) entry(op string, out *fuse.EntryOut, mode uint32) fuse.Status {
	s.mu.Lock()
	s.next++
	out.NodeId = 100 + s.next
	s.mu.Unlock()
	out.Attr = fuse.Attr{Mode: mode, Owner: fuse.Owner{Uid: 0, Gid: 0}}
	s.pass(op)
	return fuse.OK
}

func (s *bridgeSpy) Lookup(_ <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	mode := uint32(syscall.S_IFDIR | 0o755)
	if len(name) > 3 && name[len(name)-3:] == ".md" {
		mode = syscall.S_IFREG | 0o644
	}
	return s.entry("lookup", out, mode)
}

func (s *bridgeSpy) GetAttr(_ <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	out.Attr = fuse.Attr{Mode: syscall.S_IFDIR | 0o755}
	s.pass("getattr")
	return fuse.OK
}

func (s *bridgeSpy) SetAttr(_ <-chan struct{}, in *fuse.SetAttrIn, out *fuse.AttrOut) fuse.Status {
	out.Attr = fuse.Attr{Mode: syscall.S_IFREG | 0o644}
	s.pass("setattr")
	return fuse.OK
}

func (s *bridgeSpy) Statx(_ <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	out.Mode = syscall.S_IFDIR | 0o755
	s.pass("statx")
	return fuse.OK
}

func (s *bridgeSpy) Create(_ <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	return s.entry("create", &out.EntryOut, syscall.S_IFREG|0o644)
}

func (s *bridgeSpy) Mkdir(_ <-chan struct{}, in *fuse.MkdirIn, name string, out *fuse.EntryOut) fuse.Status {
	return s.entry("mkdir", out, syscall.S_IFDIR|0o755)
}

func (s *bridgeSpy) Symlink(_ <-chan struct{}, h *fuse.InHeader, target, name string, out *fuse.EntryOut) fuse.Status {
	return s.entry("symlink", out, syscall.S_IFLNK|0o777)
}

func (s *bridgeSpy) Link(_ <-chan struct{}, in *fuse.LinkIn, name string, out *fuse.EntryOut) fuse.Status {
	return s.entry("link", out, syscall.S_IFREG|0o644)
}

func (s *bridgeSpy) Rename(_ <-chan struct{}, in *fuse.RenameIn, oldName, newName string) fuse.Status {
	s.pass("rename")
	return fuse.OK
}

func (s *bridgeSpy) Unlink(_ <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	s.pass("unlink")
	return fuse.OK
}

func (s *bridgeSpy) Rmdir(_ <-chan struct{}, h *fuse.InHeader, name string) fuse.Status {
	s.pass("rmdir")
	return fuse.OK
}

func (s *bridgeSpy) Open(_ <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	s.pass("open")
	return fuse.OK
}

func (s *bridgeSpy) Read(_ <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	s.pass("read")
	return fuse.ReadResultData(nil), fuse.OK
}

func (s *bridgeSpy) Write(_ <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	s.pass("write")
	return uint32(len(data)), fuse.OK
}

func (s *bridgeSpy) OpenDir(_ <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	s.pass("opendir")
	return fuse.OK
}

func (s *bridgeSpy) ReadDir(_ <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	s.pass("readdir")
	return fuse.OK
}

func (s *bridgeSpy) CopyFileRange(_ <-chan struct{}, in *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	s.pass("copyfilerange")
	return 0, fuse.OK
}

func (s *bridgeSpy) GetXAttr(_ <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	s.pass("getxattr")
	return 0, fuse.OK
}

func (s *bridgeSpy) Access(_ <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	s.pass("access")
	return fuse.OK
}
