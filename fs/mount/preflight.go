package mount

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The checks below run before the kernel (or fusermount3) is asked, so the
// usual reasons a mount fails come back as one line naming the cause and
// the fix. fusermount3 prints its own reason to our stderr when it fails and
// go-fuse cannot capture it; failing before it runs keeps that line away.

// fuseEnv is what the checks learn about this machine and process.
type fuseEnv struct {
	root bool // euid 0: the mount is made with mount(2) directly

	dev      string      // "/dev/fuse"
	devErr   error       // opening dev read-write; nil when it opens
	devMode  os.FileMode // its permission bits
	devOwner string      // the user owning dev (a name, else a uid)
	devGroup string      // the group owning dev ("" when unknown)
	devGID   uint32

	fusermount       string // fusermount3 (or fusermount) as go-fuse finds it; "" if none
	fusermountSetuid bool   // owned by root with the set-user-ID bit

	userAllowOther bool // /etc/fuse.conf has a user_allow_other line

	mnt         string
	mntWritable bool // the mountpoint is writable by this process (fusermount3 requires it)
}

// probeFUSE gathers fuseEnv for mounting at mnt.
func probeFUSE(mnt string) fuseEnv {
	e := fuseEnv{root: os.Geteuid() == 0, dev: "/dev/fuse", mnt: mnt}
	if fi, err := os.Stat(e.dev); err != nil {
		e.devErr = err
	} else {
		e.devMode = fi.Mode().Perm()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			e.devGID = st.Gid
			e.devOwner = strconv.Itoa(int(st.Uid))
			if u, err := user.LookupId(e.devOwner); err == nil {
				e.devOwner = u.Username
			}
			if g, err := user.LookupGroupId(strconv.Itoa(int(st.Gid))); err == nil {
				e.devGroup = g.Name
			}
		}
		if f, err := os.OpenFile(e.dev, os.O_RDWR, 0); err != nil {
			e.devErr = err
		} else {
			f.Close()
		}
	}
	e.fusermount = fusermountPath()
	if e.fusermount != "" {
		if fi, err := os.Stat(e.fusermount); err == nil {
			st, ok := fi.Sys().(*syscall.Stat_t)
			e.fusermountSetuid = fi.Mode()&os.ModeSetuid != 0 && ok && st.Uid == 0
		}
	}
	e.userAllowOther = fuseConfAllows("/etc/fuse.conf")
	e.mntWritable = unix.Access(mnt, unix.W_OK) == nil
	return e
}

// fusermountPath finds the helper as go-fuse does (fusermount3, then
// fusermount; PATH, then /bin).
func fusermountPath() string {
	for _, name := range []string{"fusermount3", "fusermount"} {
		for _, p := range []string{name, filepath.Join("/bin", name)} {
			if abs, err := exec.LookPath(p); err == nil {
				return abs
			}
		}
	}
	return ""
}

// fuseConfAllows reports whether the fuse configuration file conf holds a
// user_allow_other line (not commented out).
func fuseConfAllows(conf string) bool {
	f, err := os.Open(conf)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "user_allow_other" {
			return true
		}
	}
	return false
}

// problem is the first reason a mount would fail in e, or nil. allowOther
// names what asks for allow_other: a flag ("--allow-other"), another
// phrase ("the multi-user mount"), or "" when nothing does; it matters to a
// normal user only.
func (e fuseEnv) problem(allowOther string) error {
	if e.devErr != nil {
		return e.devProblem()
	}
	if e.root {
		return nil // mount(2) directly
	}
	if e.fusermount == "" {
		return errors.New("fusermount3 not found: a normal user mounts through it; install fuse3 (apt install fuse3) or run as root")
	}
	if !e.fusermountSetuid {
		return fmt.Errorf("%s is not set-user-ID root, so it cannot mount for a normal user: reinstall fuse3 (or as root: chmod u+s %s), or run as root", e.fusermount, e.fusermount)
	}
	if allowOther != "" && !e.userAllowOther {
		alt := "run as root"
		if strings.HasPrefix(allowOther, "--") {
			alt = "mount without " + allowOther
		}
		return fmt.Errorf("%s as a normal user needs the line user_allow_other in /etc/fuse.conf: add it (as root), or %s", allowOther, alt)
	}
	if !e.mntWritable {
		return fmt.Errorf("mountpoint %s is not writable by you, and fusermount3 mounts only on a directory you can write: use one you own (mkdir -p ~/mnt)", e.mnt)
	}
	return nil
}

// devProblem explains why /dev/fuse does not open.
func (e fuseEnv) devProblem() error {
	err := e.devErr
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: load the fuse module (modprobe fuse), or give the container --device /dev/fuse; without FUSE use \"mindmount watch\"", ErrNoFUSE)
	case errors.Is(err, syscall.EACCES):
		if e.root {
			break
		}
		if e.devMode&0o060 == 0o060 && e.devGID != 0 && e.devGroup != "" {
			return fmt.Errorf("cannot open %s (permission denied): add your user to its group %s (as root: usermod -aG %s USER, then log in again), or run as root", e.dev, e.devGroup, e.devGroup)
		}
		return fmt.Errorf("cannot open %s (permission denied: mode %#o, owner %s): make it usable with chmod 0666 %s as root (the usual mode), or run as root", e.dev, e.devMode, e.devOwner, e.dev)
	case errors.Is(err, syscall.EPERM):
		return fmt.Errorf("cannot open %s (operation not permitted): the container's device rules forbid it; start the container with --device /dev/fuse, or use \"mindmount watch\"", e.dev)
	}
	return fmt.Errorf("cannot open %s: %v", e.dev, unwrapPath(err))
}

// unwrapPath drops the "open /dev/fuse:" a PathError repeats.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// CheckMount reports, before anything else starts, whether the repository
// (or serve root) dir can be mounted at mountpoint: the same checks Mount
// makes first, as one-line errors naming the cause and the
// fix. allowOther names what asks for allow_other ("--allow-other"; "" when
// nothing does).
func CheckMount(dir, mountpoint, allowOther string) error {
	d, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	mnt, err := filepath.Abs(mountpoint)
	if err != nil {
		return err
	}
	return preflight(d, mnt, allowOther)
}

// preflight turns the usual reasons a mount fails into clear errors before
// the kernel is asked: no /dev/fuse at all, then the mountpoint (missing, a
// dead mount, busy, not empty, inside the repository), then the rest of
// FUSE (see fuseEnv).
func preflight(dir, mnt, allowOther string) error {
	// Without FUSE at all, say so before asking for a mountpoint.
	if _, err := os.Stat("/dev/fuse"); errors.Is(err, os.ErrNotExist) {
		return fuseEnv{dev: "/dev/fuse", devErr: err}.devProblem()
	}
	if err := checkMountpoint(dir, mnt); err != nil {
		return err
	}
	return probeFUSE(mnt).problem(allowOther)
}

// checkMountpoint checks the directory a repository dir is to be mounted
// at.
func checkMountpoint(dir, mnt string) error {
	fi, err := os.Stat(mnt)
	switch {
	case errors.Is(err, syscall.ENOTCONN):
		return fmt.Errorf("%w: %s is a dead FUSE mount; clear it with: fusermount3 -u %s (or umount -l %s)", ErrMountpointBusy, mnt, mnt, mnt)
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("mountpoint %s does not exist: create it with mkdir -p %s", mnt, mnt)
	case err != nil:
		return fmt.Errorf("mountpoint %s: %v", mnt, unwrapPath(err))
	case !fi.IsDir():
		return fmt.Errorf("mountpoint %s is not a directory: mount on an empty directory", mnt)
	}
	if mnt == dir {
		return fmt.Errorf("mountpoint %s is the repository itself: mount on an empty directory outside it", mnt)
	}
	if strings.HasPrefix(mnt+"/", dir+"/") {
		return fmt.Errorf("mountpoint %s is inside the repository %s: mount on an empty directory outside it", mnt, dir)
	}
	if mounted, _ := isMountpoint(mnt); mounted {
		return fmt.Errorf("%w: something is already mounted at %s (unmount it first: fusermount3 -u %s)", ErrMountpointBusy, mnt, mnt)
	}
	ents, err := os.ReadDir(mnt)
	if err != nil {
		return fmt.Errorf("mountpoint %s: %v", mnt, unwrapPath(err))
	}
	if len(ents) > 0 {
		return fmt.Errorf("%w: %s is not empty (it holds %s): mount on an empty directory", ErrMountpointBusy, mnt, someNames(ents, 3))
	}
	return nil
}

// someNames lists the first max entries' names, then how many more.
func someNames(ents []os.DirEntry, max int) string {
	var names []string
	for i, e := range ents {
		if i == max {
			names = append(names, fmt.Sprintf("and %d more", len(ents)-max))
			break
		}
		names = append(names, e.Name())
	}
	return strings.Join(names, ", ")
}

// explainMountError says what to do when the mount itself failed although
// preflight found nothing: one line, whatever go-fuse's error looks like.
func explainMountError(mnt string, err error) error {
	msg := strings.Join(strings.Fields(err.Error()), " ") // go-fuse ends some errors with "\n"
	switch {
	case strings.Contains(msg, "fusermount"):
		return fmt.Errorf("mount %s: %s (fusermount3 printed its reason on the line above)", mnt, msg)
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
		return fmt.Errorf("mount %s: %s (in a container, mounting needs --device /dev/fuse and --cap-add SYS_ADMIN)", mnt, msg)
	}
	return fmt.Errorf("mount %s: %s", mnt, msg)
}
