package gitrepo

import (
	"io/fs"
	"syscall"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

type statInfo struct {
	ctime         time.Time
	dev, ino      uint64
	uid, gid      uint32
	hasOwnerInode bool
}

func statOf(fi fs.FileInfo) statInfo {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return statInfo{}
	}
	return statInfo{
		ctime:         time.Unix(st.Ctim.Sec, st.Ctim.Nsec),
		dev:           st.Dev,
		ino:           st.Ino,
		uid:           st.Uid,
		gid:           st.Gid,
		hasOwnerInode: true,
	}
}

// fillStat copies the stat data git keeps in an index entry.
func fillStat(e *index.Entry, fi fs.FileInfo) {
	st := statOf(fi)
	e.ModifiedAt = fi.ModTime()
	e.CreatedAt = st.ctime
	e.Dev = uint32(st.dev)
	e.Inode = uint32(st.ino)
	e.UID, e.GID = st.uid, st.gid
	e.Size = uint32(fi.Size())
}
