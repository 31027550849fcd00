package fs

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
