package mount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"syscall"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph/team"
)

// Policy errors: why the mount refuses an operation. They are mapped to an
// errno in one place (toErrno) so that every node answers the same way.
// The write policy's own errors (.git, synthesized, read_only, names) are
// the tracker's (tracker.CanChange); these are the mount's additions.
var (
	// errHardLink: git cannot represent hard links, so a second name would
	// silently become a copy in history.
	errHardLink = errors.New("mindmount: hard links are not supported")
	// errStateDir: .mindmount itself holds the daemon's virtual files.
	errStateDir = errors.New("mindmount: .mindmount cannot be removed or renamed")
	// errSpecialFile: devices and fifos, which git cannot store.
	errSpecialFile = errors.New("mindmount: special files are not supported")
	// errTmpfile: O_TMPFILE, whose only way to a name is a hard link.
	errTmpfile = errors.New("mindmount: O_TMPFILE is not supported")
	// errGone: the node was unlinked while the kernel still held it.
	errGone = fmt.Errorf("mindmount: file was removed: %w", fs.ErrNotExist)
	// errVirtualDir: a rename into one of the daemon's virtual folders.
	errVirtualDir = errors.New("mindmount: cannot move into a virtual folder")
	// errXattr: extended attributes of a file that may not change.
	errXattr = errors.New("mindmount: extended attributes cannot change here")
)

// toErrno maps any error to the errno a FUSE operation returns. Unknown
// errors are logged and become EIO, so a surprise never reaches a caller as
// success.
func toErrno(log *slog.Logger, op string, err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
		return errno
	case errors.Is(err, tracker.ErrGitDir), errors.Is(err, errTeamReadOnly), errors.Is(err, team.ErrReadOnly):
		return syscall.EROFS
	case errors.Is(err, tracker.ErrReadOnly), errors.Is(err, tracker.ErrInbox), errors.Is(err, tracker.ErrNotMemory), errors.Is(err, tracker.ErrCursor),
		errors.Is(err, errHardLink), errors.Is(err, errSpecialFile), errors.Is(err, errXattr):
		return syscall.EPERM
	case errors.Is(err, tracker.ErrInvalid), errors.Is(err, tracker.ErrSecret), errors.Is(err, tracker.ErrUnscanned), errors.Is(err, tracker.ErrSymlink):
		return syscall.EPERM // the gate of a team's writer refused a forwarded change
	case errors.Is(err, tracker.ErrTooLarge):
		return syscall.EFBIG
	case errors.Is(err, tracker.ErrTreeFull):
		return syscall.ENOSPC
	case errors.Is(err, tracker.ErrBadName):
		return syscall.EINVAL
	case errors.Is(err, errVirtualDir):
		return syscall.EXDEV
	case errors.Is(err, errTmpfile):
		return syscall.EOPNOTSUPP
	case errors.Is(err, tracker.ErrSynthesized), errors.Is(err, team.ErrNotMember):
		return syscall.EACCES
	case errors.Is(err, errStateDir):
		return syscall.EBUSY
	case errors.Is(err, fs.ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, fs.ErrExist):
		return syscall.EEXIST
	case errors.Is(err, fs.ErrPermission):
		return syscall.EACCES
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return syscall.EINTR
	}
	if log != nil {
		log.Warn("fs: unexpected error", "op", op, "err", err)
	}
	return syscall.EIO
}
