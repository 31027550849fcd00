package mount

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Each reason a mount fails maps to one line naming the cause and the fix
// (issue 11.2).
func TestFUSEProblemMessages(t *testing.T) {
	ok := fuseEnv{dev: "/dev/fuse", devMode: 0o666, devOwner: "root", fusermount: "/usr/bin/fusermount3", fusermountSetuid: true, userAllowOther: true, mnt: "/m", mntWritable: true}
	denied := &os.PathError{Op: "open", Path: "/dev/fuse", Err: syscall.EACCES}
	with := func(f func(e *fuseEnv)) fuseEnv { e := ok; f(&e); return e }
	for _, tc := range []struct {
		name       string
		env        fuseEnv
		allowOther string
		want       string // "" for no problem
	}{
		{"all there", ok, "--allow-other", ""},
		{"root needs no helper", with(func(e *fuseEnv) { e.root, e.fusermount, e.userAllowOther, e.mntWritable = true, "", false, false }), "--allow-other", ""},
		{"no /dev/fuse", with(func(e *fuseEnv) { e.devErr = &os.PathError{Op: "stat", Path: "/dev/fuse", Err: syscall.ENOENT} }), "",
			"/dev/fuse is missing: load the fuse module (modprobe fuse), or give the container --device /dev/fuse; without FUSE use \"mindmount watch\""},
		{"mode 0600 root", with(func(e *fuseEnv) { e.devErr, e.devMode = denied, 0o600 }), "",
			"cannot open /dev/fuse (permission denied: mode 0600, owner root): make it usable with chmod 0666 /dev/fuse as root (the usual mode), or run as root"},
		{"group fuse", with(func(e *fuseEnv) { e.devErr, e.devMode, e.devGroup, e.devGID = denied, 0o660, "fuse", 107 }), "",
			"cannot open /dev/fuse (permission denied): add your user to its group fuse (as root: usermod -aG fuse USER, then log in again), or run as root"},
		{"device cgroup", with(func(e *fuseEnv) { e.devErr = &os.PathError{Op: "open", Path: "/dev/fuse", Err: syscall.EPERM} }), "",
			"cannot open /dev/fuse (operation not permitted): the container's device rules forbid it; start the container with --device /dev/fuse, or use \"mindmount watch\""},
		{"no fusermount3", with(func(e *fuseEnv) { e.fusermount = "" }), "",
			"fusermount3 not found: a normal user mounts through it; install fuse3 (apt install fuse3) or run as root"},
		{"fusermount3 not setuid", with(func(e *fuseEnv) { e.fusermountSetuid = false }), "",
			"/usr/bin/fusermount3 is not set-user-ID root, so it cannot mount for a normal user: reinstall fuse3 (or as root: chmod u+s /usr/bin/fusermount3), or run as root"},
		{"allow other", with(func(e *fuseEnv) { e.userAllowOther = false }), "--allow-other",
			"--allow-other as a normal user needs the line user_allow_other in /etc/fuse.conf: add it (as root), or mount without --allow-other"},
		{"allow other, serve", with(func(e *fuseEnv) { e.userAllowOther = false }), "the multi-user mount (allow_other)",
			"the multi-user mount (allow_other) as a normal user needs the line user_allow_other in /etc/fuse.conf: add it (as root), or run as root"},
		{"allow other not asked", with(func(e *fuseEnv) { e.userAllowOther = false }), "", ""},
		{"mountpoint not writable", with(func(e *fuseEnv) { e.mntWritable = false }), "",
			"mountpoint /m is not writable by you, and fusermount3 mounts only on a directory you can write: use one you own (mkdir -p ~/mnt)"},
	} {
		err := tc.env.problem(tc.allowOther)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
		if strings.Contains(got, "\n") {
			t.Errorf("%s: more than one line: %q", tc.name, got)
		}
	}
	missing := with(func(e *fuseEnv) { e.devErr = &os.PathError{Op: "stat", Path: "/dev/fuse", Err: syscall.ENOENT} })
	if !errors.Is(missing.problem(""), ErrNoFUSE) {
		t.Errorf("a missing /dev/fuse is not ErrNoFUSE")
	}
}

func TestFuseConfAllows(t *testing.T) {
	dir := t.TempDir()
	for conf, want := range map[string]bool{
		"#user_allow_other\n# mount_max = 1000\n": false,
		"# comment\n  user_allow_other  \n":       true,
		"":                                        false,
	} {
		p := filepath.Join(dir, "fuse.conf")
		os.WriteFile(p, []byte(conf), 0o644)
		if got := fuseConfAllows(p); got != want {
			t.Errorf("fuseConfAllows(%q) = %v, want %v", conf, got, want)
		}
	}
	if fuseConfAllows(filepath.Join(dir, "none")) {
		t.Errorf("a missing fuse.conf allows allow_other")
	}
}

// The mountpoint's own problems come first, each one line with its fix.
func TestCheckMountpoint(t *testing.T) {
	repo := t.TempDir()
	os.Mkdir(filepath.Join(repo, "sub"), 0o755)
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "a"), nil, 0o644)
	file := filepath.Join(full, "a")
	empty := t.TempDir()
	for _, tc := range []struct{ mnt, want string }{
		{filepath.Join(empty, "nomnt"), "mountpoint " + empty + "/nomnt does not exist: create it with mkdir -p " + empty + "/nomnt"},
		{file, "mountpoint " + file + " is not a directory: mount on an empty directory"},
		{repo, "mountpoint " + repo + " is the repository itself: mount on an empty directory outside it"},
		{repo + "/sub", "mountpoint " + repo + "/sub is inside the repository " + repo + ": mount on an empty directory outside it"},
		{full, "mountpoint is busy: " + full + " is not empty (it holds a): mount on an empty directory"},
		{empty, ""},
	} {
		got := ""
		if err := checkMountpoint(repo, tc.mnt); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("checkMountpoint(%s):\n got %q\nwant %q", tc.mnt, got, tc.want)
		}
	}
}

// A failure preflight did not foresee is still one line: go-fuse ends its
// fusermount error with a newline.
func TestExplainMountErrorOneLine(t *testing.T) {
	got := explainMountError("/m", errors.New("fusermount exited with code 256\n")).Error()
	if want := "mount /m: fusermount exited with code 256 (fusermount3 printed its reason on the line above)"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}
