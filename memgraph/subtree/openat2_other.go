//go:build !linux

package subtree

import "golang.org/x/sys/unix"

// openat2 is Linux's; elsewhere every path is walked one component at a
// time.
func openat2(dirfd int, rel string, flags int, perm uint32) (int, error, bool) {
	return -1, nil, false
}

// oPath opens a directory only to name it in *at calls (O_PATH is Linux's).
const oPath = unix.O_RDONLY

func sysStat(st *unix.Stat_t) any { return st }

// renameat2's flags are Linux's; elsewhere RENAME_NOREPLACE is a check
// before a plain renameat (not atomic with it).
func renameat2(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error {
	if flags != 0 {
		var st unix.Stat_t
		if unix.Fstatat(newdirfd, newpath, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			return unix.EEXIST
		}
	}
	return unix.Renameat(olddirfd, oldpath, newdirfd, newpath)
}
