// Package subtree is the one way mindmount opens a path inside a
// repository: relative to a descriptor of the repository's root, beneath
// it, never through a symbolic link (openat2 RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS; where the kernel has no
// openat2, one component at a time with O_NOFOLLOW). A symlink planted
// anywhere on a path — at the file, at a folder, swapped in between a
// write and its commit — makes the call fail with ErrUnsafePath instead of
// reading or writing whatever the link points at.
//
// Every package that reads or writes a user's tree by path goes through
// a Tree: the tracker's reads, the git writer, consolidation, the HTTP
// transcript writer, the harness hooks, MCP and the mount.
package subtree

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// ErrUnsafePath means a path would leave the tree or pass through a
// symbolic link; nothing was opened.
var ErrUnsafePath = errors.New("refusing a path that leaves the repository or passes through a symbolic link")

// ErrNotRegular means a path names something other than a regular file
// (a FIFO, a device, a socket, a directory, a symbolic link) where a
// file's content was asked for.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge means a file is larger than the caller's limit.
var ErrTooLarge = errors.New("file too large")

// noOpenat2 is set once the kernel (or a seccomp filter) refused openat2:
// from then on paths are walked one component at a time.
var noOpenat2 atomic.Bool

// Tree is a directory opened by descriptor. Safe for concurrent use; the
// descriptor lives until Close.
type Tree struct {
	fd      int
	dir     string
	cleanup runtime.Cleanup
	closed  atomic.Bool
}

// Open opens dir as a Tree. dir itself is trusted (it is the repository the
// daemon was given); everything beneath it is not.
func Open(dir string) (*Tree, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	t := &Tree{fd: fd, dir: dir}
	// A tree held by a long-lived value without a Close of its own (a
	// graph) gives its descriptor back when it is collected.
	t.cleanup = runtime.AddCleanup(t, func(fd int) { unix.Close(fd) }, fd)
	return t, nil
}

// Close releases the root descriptor; closing twice is harmless.
func (t *Tree) Close() error {
	if t.closed.Swap(true) {
		return nil
	}
	t.cleanup.Stop()
	return unix.Close(t.fd)
}

// Dir is the directory the tree was opened at.
func (t *Tree) Dir() string { return t.dir }

// Fd is the root descriptor, for callers that keep their own descriptors
// beneath it; it stays owned by t.
func (t *Tree) Fd() int { return t.fd }

// Clean checks that rel is a clean, relative, slash-separated path inside
// the tree ("." is the root itself).
func Clean(rel string) error {
	if rel == "" || strings.HasPrefix(rel, "/") || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") || strings.ContainsRune(rel, 0) {
		return fmt.Errorf("%q: %w", rel, ErrUnsafePath)
	}
	return nil
}

// OpenFd opens rel beneath the tree with flags (O_CLOEXEC and O_NOFOLLOW
// added) and returns the raw descriptor. With O_CREAT, the parent must
// exist (see MkdirAll). A symlink anywhere on the path, or an escape, is
// ErrUnsafePath.
func (t *Tree) OpenFd(rel string, flags int, perm uint32) (int, error) {
	if err := Clean(rel); err != nil {
		return -1, err
	}
	flags |= unix.O_CLOEXEC | unix.O_NOFOLLOW
	if rel == "." {
		flags &^= unix.O_NOFOLLOW
	}
	if !noOpenat2.Load() {
		fd, err, ok := openat2(t.fd, rel, flags, perm)
		if ok {
			if err != nil {
				return -1, t.openErr(rel, err)
			}
			return fd, nil
		}
		noOpenat2.Store(true)
	}
	return t.walkOpen(rel, flags, perm)
}

// walkOpen is OpenFd without openat2: each directory is opened with
// O_NOFOLLOW relative to the one before it.
func (t *Tree) walkOpen(rel string, flags int, perm uint32) (int, error) {
	if rel == "." {
		fd, err := unix.Openat(t.fd, ".", flags, perm)
		if err != nil {
			return -1, t.pathErr("open", rel, err)
		}
		return fd, nil
	}
	dfd, err := t.openParent(rel)
	if err != nil {
		return -1, err
	}
	defer unix.Close(dfd)
	fd, err := unix.Openat(dfd, path.Base(rel), flags, perm)
	if err != nil {
		return -1, t.openErr(rel, err)
	}
	return fd, nil
}

// openParent opens the directory holding rel, one component at a time.
func (t *Tree) openParent(rel string) (int, error) {
	fd, err := unix.FcntlInt(uintptr(t.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	dir := path.Dir(rel)
	if dir == "." {
		return fd, nil
	}
	for _, name := range strings.Split(dir, "/") {
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, t.openErr(dir, err)
		}
		fd = next
	}
	return fd, nil
}

// pathErr wraps err for rel, turning the kernel's refusals of a symlink
// (ELOOP) or an escape (EXDEV) into ErrUnsafePath.
func (t *Tree) pathErr(op, rel string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		err = fmt.Errorf("%w: %w", ErrUnsafePath, err)
	}
	return &fs.PathError{Op: op, Path: rel, Err: err}
}

// openErr is pathErr for a failed open of rel. O_DIRECTORY|O_NOFOLLOW on a
// symlink says ENOTDIR: when a component of rel is a symlink, the error is
// ErrUnsafePath whatever the kernel said.
func (t *Tree) openErr(rel string, err error) error {
	if errors.Is(err, unix.ENOTDIR) && t.linkOnPath(rel) {
		err = unix.ELOOP
	}
	return t.pathErr("open", rel, err)
}

// linkOnPath reports whether a component of rel is a symbolic link. It is
// only asked after a failure, to name the failure right.
func (t *Tree) linkOnPath(rel string) bool {
	fd, err := unix.FcntlInt(uintptr(t.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return false
	}
	for _, name := range strings.Split(rel, "/") {
		var st unix.Stat_t
		if unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			break
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			return true
		}
		next, err := unix.Openat(fd, name, oPath|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return false
		}
		fd = next
	}
	unix.Close(fd)
	return false
}

// OpenFile is OpenFd as an *os.File named by its path in the tree.
func (t *Tree) OpenFile(rel string, flags int, perm fs.FileMode) (*os.File, error) {
	fd, err := t.OpenFd(rel, flags, uint32(perm.Perm()))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path.Join(t.dir, rel)), nil
}

// ReadFile reads the regular file rel whole. Anything else is
// ErrNotRegular (opened O_NONBLOCK, so a FIFO never blocks); a file larger
// than limit bytes (limit > 0) is ErrTooLarge.
func (t *Tree) ReadFile(rel string, limit int64) ([]byte, error) {
	fd, err := t.OpenFd(rel, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: rel, Err: ErrNotRegular}
	}
	if limit > 0 && fi.Size() > limit {
		return nil, &fs.PathError{Op: "read", Path: rel, Err: ErrTooLarge}
	}
	r := io.Reader(f)
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	buf := make([]byte, 0, fi.Size()+1)
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
	if limit > 0 && int64(len(buf)) > limit {
		return nil, &fs.PathError{Op: "read", Path: rel, Err: ErrTooLarge}
	}
	return buf, nil
}

// Lstat describes rel without following it (a symlink at rel is described
// as one); a symlink on the way to it is ErrUnsafePath.
func (t *Tree) Lstat(rel string) (fs.FileInfo, error) {
	if err := Clean(rel); err != nil {
		return nil, err
	}
	if rel == "." {
		return t.fstat(t.fd, ".")
	}
	dfd, err := t.OpenFd(path.Dir(rel), oPath|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, path.Base(rel), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, t.pathErr("lstat", rel, err)
	}
	return fileInfo(path.Base(rel), &st), nil
}

func (t *Tree) fstat(fd int, name string) (fs.FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, t.pathErr("stat", name, err)
	}
	return fileInfo(path.Base(name), &st), nil
}

// MkdirAll creates directory rel and its missing parents with perm, never
// through a symlink. An existing directory is fine.
func (t *Tree) MkdirAll(rel string, perm fs.FileMode) error {
	if err := Clean(rel); err != nil {
		return err
	}
	if rel == "." {
		return nil
	}
	fd, err := t.OpenFd(rel, oPath|unix.O_DIRECTORY, 0)
	if err == nil {
		unix.Close(fd)
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := t.MkdirAll(path.Dir(rel), perm); err != nil {
		return err
	}
	dfd, err := t.OpenFd(path.Dir(rel), oPath|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	// mkdirat never follows a symlink at its last component.
	if err := unix.Mkdirat(dfd, path.Base(rel), uint32(perm.Perm())); err != nil && !errors.Is(err, unix.EEXIST) {
		return t.pathErr("mkdir", rel, err)
	}
	// EEXIST: what exists must be a directory, not a link to one.
	fd, err = t.OpenFd(rel, oPath|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// Remove unlinks the file (or empty directory) rel; a symlink at rel is
// removed itself. A missing rel is fs.ErrNotExist.
func (t *Tree) Remove(rel string) error {
	if err := Clean(rel); err != nil || rel == "." {
		return fmt.Errorf("remove %q: %w", rel, ErrUnsafePath)
	}
	dfd, err := t.OpenFd(path.Dir(rel), oPath|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	err = unix.Unlinkat(dfd, path.Base(rel), 0)
	if errors.Is(err, unix.EISDIR) {
		err = unix.Unlinkat(dfd, path.Base(rel), unix.AT_REMOVEDIR)
	}
	if err != nil {
		return t.pathErr("remove", rel, err)
	}
	return nil
}

// ReadDir lists directory rel (not following a symlink to it), sorted by
// name as os.ReadDir does. Info of an entry is an Lstat beneath the tree.
func (t *Tree) ReadDir(rel string) ([]fs.DirEntry, error) {
	fd, err := t.OpenFd(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, t.pathErr("readdir", rel, err)
	}
	out := make([]fs.DirEntry, 0, len(names))
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone since the listing
		}
		out = append(out, fs.FileInfoToDirEntry(fileInfo(n, &st)))
	}
	sortEntries(out)
	return out, nil
}

// WalkDir walks the tree from rel as fs.WalkDir does; no symlink is ever
// followed, and a directory swapped for a symlink during the walk is
// reported to fn as ErrUnsafePath, not walked.
func (t *Tree) WalkDir(rel string, fn fs.WalkDirFunc) error {
	return fs.WalkDir(t.FS(), rel, fn)
}

// FS is the tree as an fs.FS (read-only, symlink-safe): for fs.WalkDir,
// fs.ReadFile and fs.Glob.
func (t *Tree) FS() fs.FS { return treeFS{t} }

type treeFS struct{ t *Tree }

var (
	_ fs.ReadDirFS  = treeFS{}
	_ fs.StatFS     = treeFS{}
	_ fs.ReadFileFS = treeFS{}
)

func (f treeFS) Open(name string) (fs.File, error) {
	return f.t.OpenFile(name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
}
func (f treeFS) ReadDir(name string) ([]fs.DirEntry, error) { return f.t.ReadDir(name) }
func (f treeFS) Stat(name string) (fs.FileInfo, error)      { return f.t.Lstat(name) }
func (f treeFS) ReadFile(name string) ([]byte, error)       { return f.t.ReadFile(name, 0) }

// fileInfo is an fs.FileInfo from a stat result.
func fileInfo(name string, st *unix.Stat_t) fs.FileInfo {
	return &statInfo{name: name, st: *st}
}

type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Sec, s.st.Mtim.Nsec) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return sysStat(&s.st) }
func (s *statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if s.st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if s.st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if s.st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

func sortEntries(es []fs.DirEntry) {
	slices.SortFunc(es, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
}

// OpenDir opens directory rel ("." is the root) for *at calls, never
// through a symlink; with create, the missing directories are made with
// perm first.
func (t *Tree) OpenDir(rel string, create bool, perm fs.FileMode) (int, error) {
	if create {
		if err := t.MkdirAll(rel, perm); err != nil {
			return -1, err
		}
	}
	return t.OpenFd(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
}

// Rename moves from to to (renameat2 with flags, e.g.
// unix.RENAME_NOREPLACE), each side's folder opened beneath the tree. A
// symlink at from is moved itself, one at to replaced, never followed.
func (t *Tree) Rename(from, to string, flags uint) error {
	if err := Clean(from); err != nil || from == "." {
		return fmt.Errorf("rename %q: %w", from, ErrUnsafePath)
	}
	if err := Clean(to); err != nil || to == "." {
		return fmt.Errorf("rename to %q: %w", to, ErrUnsafePath)
	}
	ffd, err := t.OpenDir(path.Dir(from), false, 0)
	if err != nil {
		return err
	}
	defer unix.Close(ffd)
	tfd, err := t.OpenDir(path.Dir(to), false, 0)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	if err := renameat2(ffd, path.Base(from), tfd, path.Base(to), flags); err != nil {
		return t.pathErr("rename", from, err)
	}
	return nil
}

// WriteFile replaces rel with data atomically: a temp file (atomicfile's
// name, which mindmount never commits) in rel's folder, then a rename over
// rel. Missing folders are made (0755, or 0700 when perm has no group or
// other bits). A symlink at rel is replaced, not followed; one on the way
// is ErrUnsafePath. With fsync the data is on stable storage on return.
func (t *Tree) WriteFile(rel string, data []byte, perm fs.FileMode, fsync bool) error {
	if err := Clean(rel); err != nil || rel == "." {
		return fmt.Errorf("write %q: %w", rel, ErrUnsafePath)
	}
	dirPerm := fs.FileMode(0o755)
	if perm&0o077 == 0 {
		dirPerm = 0o700
	}
	dfd, err := t.OpenDir(path.Dir(rel), true, dirPerm)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	base := path.Base(rel)
	var tmp string
	var fd int
	for {
		tmp = atomicfile.TempName(base)
		fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if err != nil {
		return t.pathErr("write", rel, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(perm.Perm()) // the umask narrowed the create mode
	}
	if werr == nil && fsync {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(dfd, tmp, dfd, base)
	}
	if werr != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return t.pathErr("write", rel, werr)
	}
	return nil
}

// Readlink returns the target of the symlink rel (the link itself, never
// one on the way to it).
func (t *Tree) Readlink(rel string) (string, error) {
	if err := Clean(rel); err != nil || rel == "." {
		return "", fmt.Errorf("readlink %q: %w", rel, ErrUnsafePath)
	}
	dfd, err := t.OpenFd(path.Dir(rel), oPath|unix.O_DIRECTORY, 0)
	if err != nil {
		return "", err
	}
	defer unix.Close(dfd)
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(dfd, path.Base(rel), buf)
	if err != nil {
		return "", t.pathErr("readlink", rel, err)
	}
	return string(buf[:n]), nil
}
