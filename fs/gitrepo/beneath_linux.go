package gitrepo

import (
	"errors"
	"io/fs"
	"path"

	"github.com/mindmount/mindmount/memgraph/subtree"

	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// beneathFS writes inside one work tree through descriptors opened beneath
// its root (subtree), so that no path string is ever resolved from "/".
type beneathFS struct {
	tree    *subtree.Tree
	dirs    map[string]int // open directory descriptors by repo-relative path
	perm    fs.FileMode    // for directories created
	written []int          // files written without fsync, kept open for flush
}

func (r *Repo) beneath() (*beneathFS, error) {
	return &beneathFS{tree: r.tree, dirs: map[string]int{}, perm: r.dirPerm()}, nil
}

func (b *beneathFS) close() {
	for _, fd := range b.written {
		unix.Close(fd)
	}
	b.written = nil
	for _, fd := range b.dirs {
		unix.Close(fd)
	}
}

// flush makes the files written without fsync and the given loose objects
// durable, all at once: the single flush of every commit (Record). The fdatasyncs
// run in parallel, which a journaling file system serves with about one
// journal commit; unlike syncfs it never waits for other programs' dirty
// data on the same disk.
func (b *beneathFS) flush(objects []string) error {
	fds := b.written
	b.written = nil
	err := syncAll(len(fds)+len(objects), func(i int) error {
		if i < len(fds) {
			return unix.Fdatasync(fds[i])
		}
		err := fdatasyncPath(objects[i-len(fds)])
		if errors.Is(err, fs.ErrNotExist) {
			// A background repack moved the object into a pack and
			// removed the loose file; git makes its packs durable itself.
			return nil
		}
		return err
	})
	for _, fd := range fds {
		if cerr := unix.Close(fd); err == nil {
			err = cerr
		}
	}
	return err
}

func fdatasyncPath(p string) error {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	err = unix.Fdatasync(fd)
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// syncAll runs sync(0..n-1) on up to 16 goroutines and returns the first
// error.
func syncAll(n int, sync func(i int) error) error {
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := 0; i < n; i++ {
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem }()
			errs <- sync(i)
		}(i)
	}
	var first error
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// dir returns a descriptor of directory rel ("." is the root), opened
// beneath the root without following symbolic links; create makes the
// missing ones. The descriptors are kept for the rest of the operation.
func (b *beneathFS) dir(rel string, create bool) (int, error) {
	if fd, ok := b.dirs[rel]; ok {
		return fd, nil
	}
	fd, err := b.tree.OpenDir(rel, create, b.perm)
	if err != nil {
		return -1, err
	}
	b.dirs[rel] = fd
	return fd, nil
}

// write replaces rel with data through a temp file and a rename inside
// rel's directory. The temp name is atomicfile's, which mindmount never
// commits, so a crash between the two leaves nothing to commit.
func (b *beneathFS) write(rel string, data []byte, perm fs.FileMode, fsync bool) error {
	dfd, err := b.dir(path.Dir(rel), true)
	if err != nil {
		return err
	}
	base := path.Base(rel)
	var tmp string
	var fd int
	for {
		tmp = atomicfile.TempName(base)
		fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm))
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if err != nil {
		return err
	}
	for rest := data; len(rest) > 0 && err == nil; {
		var n int
		n, err = unix.Write(fd, rest)
		rest = rest[n:]
	}
	if err == nil {
		err = unix.Fchmod(fd, uint32(perm)) // the umask narrowed the create mode
	}
	if err == nil && fsync {
		err = unix.Fsync(fd)
	}
	if err == nil {
		// renameat replaces a symbolic link at base; it never follows it.
		err = unix.Renameat(dfd, tmp, dfd, base)
	}
	if err != nil {
		unix.Close(fd)
		unix.Unlinkat(dfd, tmp, 0)
		return err
	}
	if !fsync {
		b.written = append(b.written, fd) // flushed by flush
		return nil
	}
	return unix.Close(fd)
}

// remove unlinks rel and the directories it left empty.
func (b *beneathFS) remove(rel string) error {
	dfd, err := b.dir(path.Dir(rel), false)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil // nothing there to remove
	}
	if err != nil {
		return err
	}
	if err := unix.Unlinkat(dfd, path.Base(rel), 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	removeEmptyParents(rel, func(d string) error {
		pfd, err := b.dir(path.Dir(d), false)
		if err != nil {
			return err
		}
		if fd, ok := b.dirs[d]; ok {
			unix.Close(fd)
			delete(b.dirs, d)
		}
		return unix.Unlinkat(pfd, path.Base(d), unix.AT_REMOVEDIR)
	})
	return nil
}

func closeFd(fd int) { unix.Close(fd) }
