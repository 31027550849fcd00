package mount

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// MountFd mounts an empty mindmount file system at mnt (for the repository
// dir, which it may not be inside) for the user uid/gid
// and returns its /dev/fuse descriptor, unserved: mindmount serve (root)
// mounts, and the user's worker, which runs as the user, serves the
// descriptor (Mount with "/dev/fd/N", N the descriptor's number in the
// worker). The kernel holds the worker's requests until it answers INIT.
// Every caller but the user and root is refused by the kernel (the top is
// the user's, 0700, with default_permissions) and by the worker
// (Options.Owner). Needs CAP_SYS_ADMIN.
func MountFd(dir, mnt string, uid, gid uint32) (*os.File, error) {
	if err := checkMountpoint(dir, mnt); err != nil {
		return nil, err
	}
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoFUSE, err)
	}
	data := fmt.Sprintf("fd=%d,rootmode=40000,user_id=%d,group_id=%d,allow_other,default_permissions", f.Fd(), uid, gid)
	if err := syscall.Mount("mindmount-serve", mnt, "fuse.mindmount", syscall.MS_NOSUID|syscall.MS_NODEV, data); err != nil {
		f.Close()
		return nil, explainMountError(mnt, err)
	}
	return f, nil
}

// Detach unmounts a mount made by MountFd lazily: the path is free at
// once, and processes still inside it see it end.
func Detach(mnt string) error {
	return syscall.Unmount(mnt, syscall.MNT_DETACH)
}

// ConnOf is the FUSE connection number of the mindmount mount at mnt (the
// minor of its device, the name of its folder under
// /sys/fs/fuse/connections), read from /proc/self/mountinfo without
// touching mnt, which may hang when its server is gone. ok is false when
// no mindmount mount is at mnt.
func ConnOf(mnt string) (conn int, ok bool) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		// ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS... - FSTYPE SOURCE ...
		pre, post, found := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !found || len(f) < 5 || len(g) < 1 || g[0] != "fuse.mindmount" || unescapeMount(f[4]) != mnt {
			continue
		}
		_, minor, _ := strings.Cut(f[2], ":")
		if n, err := strconv.Atoi(minor); err == nil {
			conn, ok = n, true // the last one listed is the one on top
		}
	}
	return conn, ok
}

// Abort ends FUSE connection conn at once (ConnOf): every request waiting
// for its server fails with ENOTCONN. It needs fusectl mounted at
// /sys/fs/fuse/connections; without it the caller relies on closing the
// last /dev/fuse descriptor, which aborts the connection as well.
func Abort(conn int) error {
	return os.WriteFile(fmt.Sprintf("/sys/fs/fuse/connections/%d/abort", conn), []byte("1"), 0)
}

// ClearStale aborts and detaches a mindmount mount left at mnt (its
// server gone), without touching mnt first: a stat of a mount whose
// server died but whose connection lives would wait for ever. Nothing
// when no mindmount mount is there.
func ClearStale(mnt string) error {
	conn, ok := ConnOf(mnt)
	if !ok {
		return nil
	}
	Abort(conn) // best effort: without fusectl, the detach below still frees the path
	return Detach(mnt)
}

// isPassedFd reports whether mountpoint is /dev/fd/N: a descriptor of a
// mount made by the caller's parent.
func isPassedFd(mountpoint string) bool {
	n, ok := strings.CutPrefix(mountpoint, "/dev/fd/")
	if !ok {
		return false
	}
	i, err := strconv.Atoi(n)
	return err == nil && i > 0
}
