package host

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"
)

// GiveToUser makes every file and folder under dir that root owns the
// user's (uid, gid): what an earlier serve, running everything as root,
// left in a user's repository (.git/index, refs, object folders), so that
// the user's worker — and the user's own git — can use it. It runs as root
// on a tree the user controls, so it never follows a symlink (every folder
// is opened by descriptor with O_NOFOLLOW, every change is fchownat
// AT_SYMLINK_NOFOLLOW), leaves alone what another user owns, and skips a
// regular file with more than one link: a hard link to /etc/shadow is
// root's and must stay root's.
func GiveToUser(dir string, uid, gid uint32) error { return GiveTo(dir, uid, gid, 0) }

// GiveTo is GiveToUser for entries owned by root or by any of from (the
// user's previous uids, after a uid change).
func GiveTo(dir string, uid, gid uint32, from ...uint32) error {
	own := func(u uint32) bool { return u == 0 || slices.Contains(from, u) }
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if own(st.Uid) {
		if err := unix.Fchown(fd, int(uid), int(gid)); err != nil {
			return err
		}
	}
	return giveDir(fd, uid, gid, own, 0)
}

// maxDepth bounds the walk: a memory repository is never this deep.
const maxDepth = 64

func giveDir(dfd int, uid, gid uint32, own func(uint32) bool, depth int) error {
	if depth > maxDepth {
		return errors.New("folders nested too deep")
	}
	f, err := dupCloexec(dfd)
	if err != nil {
		return err
	}
	names, err := readNames(f)
	if err != nil {
		return err
	}
	var first error
	for _, name := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			continue // gone since the listing
		}
		kind := st.Mode & unix.S_IFMT
		if own(st.Uid) && (kind == unix.S_IFDIR || kind == unix.S_IFLNK || (kind == unix.S_IFREG && st.Nlink == 1)) {
			if err := unix.Fchownat(dfd, name, int(uid), int(gid), unix.AT_SYMLINK_NOFOLLOW); err != nil && first == nil {
				first = fmt.Errorf("%s: %w", name, err)
			}
		}
		if kind != unix.S_IFDIR {
			continue
		}
		sub, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // swapped for something else since the stat: not ours to follow
		}
		err = giveDir(sub, uid, gid, own, depth+1)
		unix.Close(sub)
		if err != nil && first == nil {
			first = fmt.Errorf("%s/%w", name, err)
		}
	}
	return first
}

// readNames lists the directory open at fd (consumed: fd is closed).
func readNames(fd int) ([]string, error) {
	defer unix.Close(fd)
	var names []string
	buf := make([]byte, 32<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// dupCloexec duplicates fd closed on exec: a plain dup(2) would leak the
// user's folder into every process the daemon starts meanwhile (a spare
// worker, later another user's).
func dupCloexec(fd int) (int, error) {
	return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
}

// GiveAlong walks the path els from the folder from down, giving each
// entry on the way that root owns to the owner of the folder it lies in,
// unless that is root: what root made in a person's folder (hooks install
// --scope project run as root) becomes the person's. The last element,
// when it is a folder, is handed over whole by GiveTo. A folder root owns
// keeps root's files, and no symbolic link is followed: each folder is
// opened by descriptor with O_NOFOLLOW, so a link planted on the way ends
// the walk.
func GiveAlong(from string, els []string) error {
	dfd, err := unix.Open(from, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer func() { unix.Close(dfd) }()
	for i, name := range els {
		var dir, st unix.Stat_t
		if err := unix.Fstat(dfd, &dir); err != nil {
			return err
		}
		if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				return nil // removed (an uninstall), or never made
			}
			return err
		}
		if dir.Uid == 0 {
			return nil // root's folder keeps root's files
		}
		kind := st.Mode & unix.S_IFMT
		if kind == unix.S_IFDIR && i == len(els)-1 {
			// A folder install filled (the skills): all root owns in it.
			return GiveTo(fmt.Sprintf("/proc/self/fd/%d/%s", dfd, name), dir.Uid, dir.Gid)
		}
		if st.Uid == 0 && (kind == unix.S_IFDIR || kind == unix.S_IFLNK || kind == unix.S_IFREG && st.Nlink == 1) {
			if err := unix.Fchownat(dfd, name, int(dir.Uid), int(dir.Gid), unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return err
			}
		}
		if kind != unix.S_IFDIR {
			return nil // a file or a link on the way: never followed
		}
		sub, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		unix.Close(dfd)
		dfd = sub
	}
	return nil
}
