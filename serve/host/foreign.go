package host

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Root never opens a user's repository with its own rights: a repository's
// own configuration names programs (core.fsmonitor, gpg.program with
// log.showSignature, filters, hooks) that git runs with the rights of
// whoever runs git there. So a command run as root on paths another user
// owns either asks the daemon serving them (the control socket) or runs
// again as that user (ForeignOwner says who; the command re-executes
// itself and the new process drops with DropPrivileges, the worker's
// drop). And where git must read a tree nobody vouches for (an import's
// source), it reads with go-git, which runs no configured program, or
// with Git's scrubbed configuration.

// Owner is the user a command run as root becomes before it touches a
// user's files.
type Owner struct{ UID, GID uint32 }

func (o Owner) String() string { return fmt.Sprintf("%d:%d", o.UID, o.GID) }

// ParseOwner reads Owner.String's form.
func ParseOwner(s string) (Owner, error) {
	var o Owner
	if _, err := fmt.Sscanf(s, "%d:%d", &o.UID, &o.GID); err != nil || o.String() != s {
		return Owner{}, fmt.Errorf("%q is not uid:gid", s)
	}
	return o, nil
}

// ErrOwners means the paths a command was given belong to different users:
// no single user may touch them all, and root will not.
var ErrOwners = errors.New("the paths belong to different users")

// ForeignOwner says whose rights a command run as root must take before it
// touches paths: the one user other than root who owns any of them (the
// path itself, the symbolic link it is and what it points to, its .git
// and .git/config; for a path not made yet, the nearest folder above it
// that exists). foreign is false when root owns them all. Two users
// between them is ErrOwners.
func ForeignOwner(paths ...string) (o Owner, foreign bool, err error) {
	owners := map[uint32]uint32{} // uid -> gid of a file of theirs
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return Owner{}, false, err
		}
		for _, q := range ownedBy(abs) {
			if q.UID != 0 {
				owners[q.UID] = q.GID
			}
		}
	}
	switch len(owners) {
	case 0:
		return Owner{}, false, nil
	case 1:
	default:
		return Owner{}, false, fmt.Errorf("%w: %v", ErrOwners, paths)
	}
	for uid, gid := range owners {
		o = Owner{UID: uid, GID: gid}
	}
	// The user's own primary group, when the system knows the user (a
	// file's group may be one they share with others).
	if u, err := user.LookupId(strconv.FormatUint(uint64(o.UID), 10)); err == nil {
		if g, err := strconv.ParseUint(u.Gid, 10, 32); err == nil {
			o.GID = uint32(g)
		}
	}
	return o, true, nil
}

// ownedBy lists the owners of abs as ForeignOwner reads them.
func ownedBy(abs string) []Owner {
	for {
		if _, err := os.Lstat(abs); err == nil || filepath.Dir(abs) == abs {
			break
		}
		abs = filepath.Dir(abs)
	}
	var out []Owner
	add := func(fi os.FileInfo, err error) {
		if err != nil {
			return
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			out = append(out, Owner{UID: st.Uid, GID: st.Gid})
		}
	}
	add(os.Lstat(abs))
	add(os.Stat(abs))
	git := filepath.Join(abs, ".git")
	add(os.Lstat(git))
	add(os.Lstat(filepath.Join(git, "config")))
	return out
}

// Git is the git CLI run on the work tree dir with a scrubbed
// configuration: no system or global configuration, and the settings of
// the repository's own that run a program (fsmonitor, hooks, signature
// checks, pagers, editors, external diffs, credential helpers) switched
// off. It is for reading a repository the caller does not vouch for; it
// is no licence to run git as root on another user's tree (filters and
// other named drivers cannot all be switched off from the command line).
func Git(dir string, args ...string) *exec.Cmd {
	base := []string{"-C", dir,
		"-c", "core.fsmonitor=",
		"-c", "core.hooksPath=/dev/null",
		"-c", "log.showSignature=false",
		"-c", "gpg.program=false",
		"-c", "gpg.ssh.program=false",
		"-c", "gpg.x509.program=false",
		"-c", "core.pager=cat",
		"-c", "core.editor=false",
		"-c", "core.askPass=",
		"-c", "core.sshCommand=false",
		"-c", "diff.external=",
		"-c", "credential.helper=",
		"-c", "protocol.allow=never",
		"-c", "protocol.file.allow=always",
		"--no-pager",
	}
	cmd := exec.Command("git", append(base, args...)...)
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0", // a read leaves the index as it was
	)
	return cmd
}
