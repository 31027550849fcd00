package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// resolveBeneath keeps every path we open inside the memory: no "..", no
// absolute path, no symlink on the way (a symlink planted at
// transcripts/ or at the file itself would otherwise redirect an append
// outside the repository), no magic /proc links.
const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openBeneath opens rel (slash-separated, inside root) with flags, creating
// the missing parent directories of rel first when create is set. It works
// the same on a plain repository and through a mount.
func openBeneath(root, rel string, flags int, perm uint32, create bool) (*os.File, error) {
	if rel == "" || strings.HasPrefix(rel, "/") || filepath.Clean(rel) != filepath.FromSlash(rel) || strings.HasPrefix(rel, "..") {
		return nil, errors.New("unsafe path " + rel)
	}
	rootFd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(rootFd)
	if create {
		if err := mkdirsBeneath(rootFd, filepath.Dir(rel)); err != nil {
			return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(root, filepath.Dir(rel)), Err: err}
		}
	}
	fd, err := unix.Openat2(rootFd, rel, &unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC | unix.O_NOFOLLOW),
		Mode:    uint64(perm),
		Resolve: resolveBeneath,
	})
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(root, rel), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(root, rel)), nil
}

// mkdirsBeneath creates dir and its parents under rootFd, one component at
// a time, each checked by openat2 so no component may be a symlink.
func mkdirsBeneath(rootFd int, dir string) error {
	if dir == "." || dir == "" {
		return nil
	}
	parts := strings.Split(filepath.ToSlash(dir), "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		fd, err := unix.Openat2(rootFd, sub, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolveBeneath})
		if err == nil {
			unix.Close(fd)
			continue
		}
		if !errors.Is(err, unix.ENOENT) {
			return err
		}
		// The parent was just checked; mkdirat never follows a final symlink.
		parent := rootFd
		if i > 0 {
			pfd, err := unix.Openat2(rootFd, strings.Join(parts[:i], "/"), &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolveBeneath})
			if err != nil {
				return err
			}
			defer unix.Close(pfd)
			parent = pfd
		}
		if err := unix.Mkdirat(parent, parts[i], 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return err
		}
	}
	return nil
}
