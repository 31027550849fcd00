package subtree

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resolve keeps every open beneath the root: no "..", no absolute path, no
// symlink on the way, no magic /proc link.
const resolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openat2 opens rel beneath dirfd in one system call. ok is false when the
// kernel has no openat2 or a seccomp filter refuses it.
func openat2(dirfd int, rel string, flags int, perm uint32) (fd int, err error, ok bool) {
	for {
		fd, err := unix.Openat2(dirfd, rel, &unix.OpenHow{Flags: uint64(flags), Mode: uint64(perm), Resolve: resolve})
		switch err {
		case unix.EINTR, unix.EAGAIN: // openat2 asks to retry after a racing rename
			continue
		case unix.ENOSYS, unix.EPERM:
			return -1, err, false
		}
		return fd, err, true
	}
}

// oPath opens a directory only to name it in *at calls.
const oPath = unix.O_PATH

// sysStat is a stat result as os.FileInfo.Sys gives it (*syscall.Stat_t),
// which callers already read; x/sys's Stat_t has the same layout on Linux.
func sysStat(st *unix.Stat_t) any { return (*syscall.Stat_t)(unsafe.Pointer(st)) }

var _ [unsafe.Sizeof(syscall.Stat_t{}) - unsafe.Sizeof(unix.Stat_t{})]byte // same size

func renameat2(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error {
	return unix.Renameat2(olddirfd, oldpath, newdirfd, newpath, flags)
}
