package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mindmount/mindmount/serve/host"
)

// requireDir turns a missing or non-directory DIR into a clear error.
func requireDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s does not exist (create a memory repository with: mindmount init %s)", dir, dir)
		}
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

// requireMindmountRepo is the one test every command applies to a repository
// argument: a directory holding a git work tree (.git) and character.md or
// user.md at its top. A plain folder or a plain git repository gets the
// same error everywhere, saying how to make one; a repository made before
// the rename, saying how to upgrade it.
func requireMindmountRepo(dir string) error {
	if err := requireDir(dir); err != nil {
		return err
	}
	if err := viralHint(dir); err != nil {
		return err
	}
	if !host.IsMindmountRepo(dir) {
		return host.NotMindmountError(dir)
	}
	return host.CheckUpgraded(dir)
}

// repoOf finds the mindmount repository holding path (a file or folder inside
// it, or the repository itself) and returns its root and path relative to
// that root in slash form ("" for the root itself).
func repoOf(path string) (root, rel string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", "", fmt.Errorf("%s does not exist", path)
		}
		return "", "", err
	}
	if st.IsDir() {
		if err := viralHint(abs); err != nil {
			return "", "", err
		}
	}
	for dir := abs; ; dir = filepath.Dir(dir) {
		if host.IsMindmountRepo(dir) {
			r, err := filepath.Rel(dir, abs)
			if err != nil {
				return "", "", err
			}
			if r == "." {
				r = ""
			}
			return dir, filepath.ToSlash(r), nil
		}
		if filepath.Dir(dir) == dir {
			if st.IsDir() { // the same line as every command taking a REPO
				return "", "", host.NotMindmountError(path)
			}
			return "", "", fmt.Errorf("%s is not inside a mindmount repository: run mindmount init DIR to make one", path)
		}
	}
}

// ownerEnv tells a command re-executed by asOwner whose rights to take.
const ownerEnv = "MINDMOUNT_AS_OWNER"

// selfExe is the program asOwner re-executes; tests that run commands in
// this process point it at the built binary.
var selfExe = os.Executable

// asOwner is the one rule for a command run as root on paths another user
// owns (host.ForeignOwner): it runs the command again, argv, as that
// user, and handed is true (err is the new process's outcome). Root never
// opens a user's repository with its own rights, so no program the
// user's git configuration names runs as root and no file root creates
// is left in the user's tree. In the re-executed process asOwner drops to
// the user (host.DropPrivileges, the worker's drop: uid, gid, no groups,
// the parent-death signal) before anything is opened, and returns false:
// the command goes on as the user. argv's paths must be absolute (the
// new process starts in /). Commands not run as root are not affected.
func asOwner(ctx context.Context, argv []string, paths ...string) (handed bool, err error) {
	return asOwnerTo(ctx, stdout, argv, paths...)
}

// asOwnerTo is asOwner with the new process's standard output sent to out.
func asOwnerTo(ctx context.Context, out io.Writer, argv []string, paths ...string) (handed bool, err error) {
	if os.Geteuid() != 0 {
		return false, nil
	}
	o, foreign, err := host.ForeignOwner(paths...)
	if err != nil {
		return true, err
	}
	if want, ok := os.LookupEnv(ownerEnv); ok {
		os.Unsetenv(ownerEnv)
		if !foreign || want != o.String() {
			return true, fmt.Errorf("the owner of %s changed while mindmount ran as them: run it again", strings.Join(paths, " and "))
		}
		if err := host.DropPrivileges(o.UID, o.GID); err != nil {
			return true, fmt.Errorf("become the owner of %s: %w", strings.Join(paths, " and "), err)
		}
		return false, nil
	}
	if !foreign {
		return false, nil
	}
	exe, err := selfExe()
	if err != nil {
		return true, err
	}
	cmd := exec.CommandContext(ctx, exe, argv...)
	cmd.Dir = "/"
	// The owner's own HOME, not root's: a command that reads a default
	// under HOME (sync's credentials file) must find the owner's, and root's
	// 0700 home would only answer "permission denied".
	cmd.Env = append(withoutEnv(os.Environ(), "HOME"), "HOME="+ownerHome(o.UID), ownerEnv+"="+o.String())
	cmd.Stdout, cmd.Stderr = out, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		return true, exitError{ee.ExitCode()}
	}
	if err != nil {
		return true, fmt.Errorf("run as the owner (uid %d) of %s: %w", o.UID, strings.Join(paths, " and "), err)
	}
	return true, nil
}

// ownerHome is uid's home folder from the passwd database, or
// /nonexistent (as for a system account) when it has none.
func ownerHome(uid uint32) string {
	if u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10)); err == nil && u.HomeDir != "" {
		return u.HomeDir
	}
	return "/nonexistent"
}

// withoutEnv is env without the variables named.
func withoutEnv(env []string, names ...string) []string {
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}

// absAll makes paths absolute, for asOwner's argv.
func absAll(paths ...string) ([]string, error) {
	out := make([]string, len(paths))
	for i, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}
