package mcpserver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
	"github.com/mindmount/mindmount/memgraph/tracker"
)

// tree reads and writes the working tree of one repository, confined to it:
// every path is resolved with openat2 under RESOLVE_BENEATH and
// RESOLVE_NO_SYMLINKS (as the mount's open does), so neither `..` nor a
// symbolic link anywhere on the way can lead outside, whatever a path
// check above missed.
type tree struct{ root string }

// errSymlink is returned for a path that runs through a symbolic link.
var errSymlink = errors.New("the path runs through a symbolic link, which memory tools do not follow")

const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openat2 opens rel beneath dirfd, retrying the transient errors openat2
// returns when a rename races it.
func openat2(dirfd int, rel string, flags uint64, mode uint64) (int, error) {
	for {
		fd, err := unix.Openat2(dirfd, rel, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Mode: mode, Resolve: resolveFlags})
		switch err {
		case nil:
			return fd, nil
		case unix.EINTR, unix.EAGAIN:
			continue
		case unix.ELOOP, unix.EXDEV:
			// ELOOP: a symlink on the way; EXDEV: an escape attempt.
			return -1, errSymlink
		}
		return -1, err
	}
}

func (t tree) openRoot() (int, error) {
	return unix.Open(t.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// openDir opens the directory rel ("." for the root) for *at calls. With
// create, missing directories are made one component at a time, each
// created with mkdirat in the directory just opened beneath the root.
func (t tree) openDir(rel string, create bool) (int, error) {
	root, err := t.openRoot()
	if err != nil {
		return -1, err
	}
	if rel == "." || rel == "" {
		return root, nil
	}
	if !create {
		defer unix.Close(root)
		return openat2(root, rel, unix.O_PATH|unix.O_DIRECTORY, 0)
	}
	fd := root
	for _, el := range splitPath(rel) {
		if err := unix.Mkdirat(fd, el, 0o755); err != nil && err != unix.EEXIST {
			unix.Close(fd)
			return -1, err
		}
		next, err := openat2(fd, el, unix.O_PATH|unix.O_DIRECTORY, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// read returns the content of the regular file rel; ok is false when it
// does not exist.
func (t tree) read(rel string) (data []byte, ok bool, err error) {
	root, err := t.openRoot()
	if err != nil {
		return nil, false, err
	}
	defer unix.Close(root)
	fd, err := openat2(root, rel, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, err
	}
	if fi.IsDir() {
		return nil, false, errIsDir
	}
	if !fi.Mode().IsRegular() {
		return nil, false, fmt.Errorf("%s is not a regular file", rel)
	}
	data, err = io.ReadAll(io.LimitReader(f, maxRead+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > maxRead {
		return nil, false, fmt.Errorf("%s is larger than %d KiB; memory tools do not read it", rel, maxRead>>10)
	}
	return data, true, nil
}

// maxRead bounds what view reads: memory files are at most 64 KiB, other
// files are shown only when small.
const maxRead = 1 << 20

var errIsDir = errors.New("is a directory")

// isDir reports whether rel is a directory (not through a symlink).
func (t tree) isDir(rel string) bool {
	fd, err := t.openDir(rel, false)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// list returns the entries of the directory rel.
func (t tree) list(rel string) ([]os.DirEntry, error) {
	root, err := t.openRoot()
	if err != nil {
		return nil, err
	}
	defer unix.Close(root)
	target := rel
	if target == "" {
		target = "."
	}
	fd, err := openat2(root, target, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	return f.ReadDir(-1)
}

// write replaces rel with data through a temp file and a rename in the
// same directory, so a reader (the mount, fsnotify, a cat) never sees half
// a file. The temp name is atomicfile's, which the tracker never commits. An
// existing file keeps its permission bits; a symlink at rel is refused.
func (t tree) write(rel string, data []byte) error {
	dir, base := path.Split(rel)
	dfd, err := t.openDir(path.Clean(dir), true)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	mode := uint32(0o644)
	if tracker.IsInbox(rel) {
		mode = 0o600 // a transcript is private talk, as every front writes it
	}
	var st unix.Stat_t
	switch err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return errSymlink
	case err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("%s exists and is not a regular file", rel)
	case err == nil:
		mode = st.Mode & 0o777
	case err != unix.ENOENT:
		return err
	}
	var tmp string
	var fd int
	for {
		tmp = atomicfile.TempName(base)
		fd, err = openat2(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, uint64(mode))
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(os.FileMode(mode))
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = unix.Renameat(dfd, tmp, dfd, base)
	}
	if werr != nil {
		unix.Unlinkat(dfd, tmp, 0)
	}
	return werr
}

// remove deletes the file rel (never a directory, never through a link).
func (t tree) remove(rel string) error {
	dir, base := path.Split(rel)
	dfd, err := t.openDir(path.Clean(dir), false)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	return unix.Unlinkat(dfd, base, 0)
}

// rename moves the file from to to, refusing to replace anything at to.
func (t tree) rename(from, to string) error {
	fdir, fbase := path.Split(from)
	tdir, tbase := path.Split(to)
	ffd, err := t.openDir(path.Clean(fdir), false)
	if err != nil {
		return err
	}
	defer unix.Close(ffd)
	tfd, err := t.openDir(path.Clean(tdir), true)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	return unix.Renameat2(ffd, fbase, tfd, tbase, unix.RENAME_NOREPLACE)
}

// splitPath splits a clean relative path into its elements.
func splitPath(rel string) []string { return strings.Split(rel, "/") }
