//go:build !linux

package gitrepo

import (
	"io/fs"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

type statInfo struct {
	ctime         time.Time
	dev, ino      uint64
	uid, gid      uint32
	hasOwnerInode bool
}

func statOf(fi fs.FileInfo) statInfo { return statInfo{} }

// fillStat copies what the portable FileInfo offers; git re-reads files whose
// other stat fields do not match, so the index stays correct, only slower.
func fillStat(e *index.Entry, fi fs.FileInfo) {
	e.ModifiedAt = fi.ModTime()
	e.Size = uint32(fi.Size())
}
