package memgraph

import (
	"errors"
	"github.com/mindmount/mindmount/memgraph/subtree"
	"io/fs"
	"syscall"
)

// readMemoryFile reads the file rel of tree for Update with as few system
// calls as possible (open, fstat, read, close), because Update runs on
// every write the mount sees. It follows no symlink, anywhere on the path:
// a memory is a regular file, and a link could point outside the
// repository. isDir reports a directory; notRegular anything else that is
// not a file, or a path through a link. A file the size rule refuses
// (SizeProblem) is not read: its size comes back in tooLarge, data nil.
func readMemoryFile(tree *subtree.Tree, rel string) (data []byte, tooLarge int64, isDir, notRegular bool, err error) {
	p := rel
	fd, err := tree.OpenFd(rel, syscall.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, subtree.ErrUnsafePath) {
			return nil, 0, false, true, nil
		}
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return nil, 0, false, false, fs.ErrNotExist
		}
		return nil, 0, false, false, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, 0, false, false, &fs.PathError{Op: "fstat", Path: p, Err: err}
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return nil, 0, true, false, nil
	case syscall.S_IFREG:
	default:
		return nil, 0, false, true, nil
	}
	limit := SizeLimit(rel)
	if limit > 0 && st.Size > limit {
		return nil, st.Size, false, false, nil
	}
	// One byte more than the size, so a file that grew since fstat is
	// still read to its end (up to the limit and one byte).
	buf := make([]byte, st.Size+1)
	n := 0
	for {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return nil, 0, false, false, &fs.PathError{Op: "read", Path: p, Err: err}
		}
		if m == 0 {
			break
		}
		n += m
		if limit > 0 && int64(n) > limit {
			return nil, int64(n), false, false, nil // grew past the rule as we read
		}
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
	}
	return buf[:n], 0, false, false, nil
}
