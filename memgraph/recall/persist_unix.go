//go:build unix

package recall

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// noFollow makes LoadFile refuse a symbolic link in place of the file.
const noFollow = syscall.O_NOFOLLOW

// sameOwner reports whether a and b have the same owner uid.
func sameOwner(a, b fs.FileInfo) bool {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && sa.Uid == sb.Uid
}

// ownsClosest reports whether this process's effective uid owns dir, or
// its closest existing ancestor.
func ownsClosest(dir string) bool {
	for {
		fi, err := os.Lstat(dir)
		if err == nil {
			st, ok := fi.Sys().(*syscall.Stat_t)
			return ok && int(st.Uid) == os.Geteuid()
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}
