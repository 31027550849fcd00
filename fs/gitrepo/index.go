package gitrepo

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/mindmount/mindmount/fs/gitrepo/failpoint"
)

// indexCache keeps the decoded .git/index in memory between commits. It is
// valid while the file on disk has the size, mtime and inode it had when we
// read or wrote it; anything else (a git command ran) makes us decode again.
type indexCache struct {
	path string
	idx  *index.Index
	key  fileKey
}

// fileKey identifies one version of a file cheaply.
type fileKey struct {
	size  int64
	mtime time.Time
	ino   uint64
}

func keyOf(fi fs.FileInfo) fileKey {
	st := statOf(fi)
	return fileKey{size: fi.Size(), mtime: fi.ModTime(), ino: st.ino}
}

// load returns the current index, decoding the file only when it changed.
// A missing index (a fresh repository) is an empty version 2 index.
func (c *indexCache) load() (*index.Index, error) {
	fi, err := os.Stat(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		c.idx, c.key = &index.Index{Version: 2}, fileKey{}
		return c.idx, nil
	}
	if err != nil {
		return nil, err
	}
	if c.idx != nil && keyOf(fi) == c.key {
		return c.idx, nil
	}
	f, err := os.Open(c.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx := &index.Index{}
	if err := index.NewDecoder(bufio.NewReader(f)).Decode(idx); err != nil {
		return nil, fmt.Errorf("read %s: %w", c.path, err)
	}
	sort.SliceStable(idx.Entries, func(i, j int) bool { return entryLess(idx.Entries[i], idx.Entries[j]) })
	c.idx, c.key = idx, keyOf(fi)
	return idx, nil
}

// invalidate forgets the cached index, so the next load decodes the file.
func (c *indexCache) invalidate() { c.idx = nil }

func entryLess(a, b *index.Entry) bool {
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Stage < b.Stage
}

// search returns the position of the first entry whose name is >= name.
func search(idx *index.Index, name string) int {
	return sort.Search(len(idx.Entries), func(i int) bool { return idx.Entries[i].Name >= name })
}

// removePath drops every entry (all stages) named name.
func removePath(idx *index.Index, name string) {
	i := search(idx, name)
	j := i
	for j < len(idx.Entries) && idx.Entries[j].Name == name {
		j++
	}
	if j > i {
		idx.Entries = append(idx.Entries[:i], idx.Entries[j:]...)
	}
}

// removePrefix drops every entry under the directory dir ("a/b" removes
// "a/b/..."), used when a file replaces a directory.
func removePrefix(idx *index.Index, dir string) {
	p := dir + "/"
	i := search(idx, p)
	j := i
	for j < len(idx.Entries) && len(idx.Entries[j].Name) >= len(p) && idx.Entries[j].Name[:len(p)] == p {
		j++
	}
	if j > i {
		idx.Entries = append(idx.Entries[:i], idx.Entries[j:]...)
	}
}

// setEntry replaces all entries named e.Name by e (stage 0).
func setEntry(idx *index.Index, e *index.Entry) {
	i := search(idx, e.Name)
	j := i
	for j < len(idx.Entries) && idx.Entries[j].Name == e.Name {
		j++
	}
	if j == i+1 {
		idx.Entries[i] = e
		return
	}
	rest := append([]*index.Entry{e}, idx.Entries[j:]...)
	idx.Entries = append(idx.Entries[:i], rest...)
}

// getEntry returns the stage-0 entry named name, or nil.
func getEntry(idx *index.Index, name string) *index.Entry {
	i := search(idx, name)
	for ; i < len(idx.Entries) && idx.Entries[i].Name == name; i++ {
		if idx.Entries[i].Stage == 0 {
			return idx.Entries[i]
		}
	}
	return nil
}

// lockIndex creates .git/index.lock exclusively, as git does before it
// touches the index. A lock held by a running git command is waited for
// briefly (polling), then reported as ErrIndexLocked.
func (r *Repo) lockIndex() (*os.File, error) {
	lock := r.idx.path + ".lock"
	deadline := time.Now().Add(r.lockTry)
	wait := time.Millisecond
	for {
		f, err := r.createLock(lock, "index", os.O_RDWR)
		if err == nil {
			failpoint.Inject(failpoint.IndexLocked)
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%w: remove %s if no git command is running", ErrIndexLocked, lock)
		}
		time.Sleep(wait) // polling a lock held by another process; there is no event to wait on
		wait = min(wait*2, 50*time.Millisecond)
	}
}

// unlockIndex gives up the lock without changing the index.
func (r *Repo) unlockIndex(f *os.File) {
	f.Close()
	os.Remove(f.Name())
	r.dropOwner("index")
}

// indexPoints are the failpoints of an index write: after the lock file
// is written, after it is renamed.
type indexPoints struct{ written, renamed string }

var (
	commitPoints  = indexPoints{failpoint.IndexWritten, failpoint.IndexRenamed}
	refreshPoints = indexPoints{failpoint.RefreshWritten, failpoint.RefreshRenamed}
)

// commitIndex writes idx into the held lock file and renames it over
// .git/index, which is how git replaces the index atomically.
func (r *Repo) commitIndex(f *os.File, idx *index.Index, points indexPoints) error {
	r.idxBuf = encodeIndex(r.idxBuf[:0], idx)
	_, err := f.Write(r.idxBuf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		failpoint.Inject(points.written)
		err = os.Rename(f.Name(), r.idx.path)
	}
	if err != nil {
		os.Remove(f.Name())
		r.dropOwner("index")
		r.idx.invalidate()
		return fmt.Errorf("write git index: %w", err)
	}
	r.dropOwner("index")
	failpoint.Inject(points.renamed)
	if fi, serr := os.Stat(r.idx.path); serr == nil {
		r.idx.idx, r.idx.key = idx, keyOf(fi)
	} else {
		r.idx.invalidate()
	}
	return nil
}

// encodeIndex renders idx in index format version 2 (3 when an entry needs
// extended flags). Extensions are not written: git rebuilds its cache-tree
// and untracked cache on demand. go-git's encoder writes the same format
// but field by field through reflection, which dominated commit time at
// 10,000 entries.
func encodeIndex(dst []byte, idx *index.Index) []byte {
	version := uint32(2)
	for _, e := range idx.Entries {
		if e.IntentToAdd || e.SkipWorktree {
			version = 3
			break
		}
	}
	size := 12 + 20
	for _, e := range idx.Entries {
		size += 64 + len(e.Name) + 8
	}
	buf := bytes.NewBuffer(dst)
	buf.Grow(size)
	var hdr [12]byte
	copy(hdr[:4], "DIRC")
	binary.BigEndian.PutUint32(hdr[4:], version)
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(idx.Entries)))
	buf.Write(hdr[:])
	var fixed [64]byte
	for _, e := range idx.Entries {
		be := binary.BigEndian
		be.PutUint32(fixed[0:], uint32(e.CreatedAt.Unix()))
		be.PutUint32(fixed[4:], uint32(e.CreatedAt.Nanosecond()))
		be.PutUint32(fixed[8:], uint32(e.ModifiedAt.Unix()))
		be.PutUint32(fixed[12:], uint32(e.ModifiedAt.Nanosecond()))
		if e.CreatedAt.IsZero() {
			be.PutUint64(fixed[0:], 0)
		}
		if e.ModifiedAt.IsZero() {
			be.PutUint64(fixed[8:], 0)
		}
		be.PutUint32(fixed[16:], e.Dev)
		be.PutUint32(fixed[20:], e.Inode)
		be.PutUint32(fixed[24:], uint32(e.Mode))
		be.PutUint32(fixed[28:], e.UID)
		be.PutUint32(fixed[32:], e.GID)
		be.PutUint32(fixed[36:], e.Size)
		copy(fixed[40:60], e.Hash[:])
		flags := uint16(e.Stage&3) << 12
		if l := len(e.Name); l < 0xfff {
			flags |= uint16(l)
		} else {
			flags |= 0xfff
		}
		n := 62
		if e.IntentToAdd || e.SkipWorktree {
			flags |= 0x4000
			var ext uint16
			if e.IntentToAdd {
				ext |= 1 << 13
			}
			if e.SkipWorktree {
				ext |= 1 << 14
			}
			be.PutUint16(fixed[62:], ext)
			n = 64
		}
		be.PutUint16(fixed[60:], flags)
		buf.Write(fixed[:n])
		buf.WriteString(e.Name)
		pad := 8 - (n+len(e.Name))%8
		buf.Write(zeros[:pad])
	}
	sum := sha1.Sum(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes()
}

var zeros [8]byte

// newEntry builds the index entry for a committed file. When the work tree
// file at abs holds exactly data with the right exec bit, the entry carries
// its stat data so git sees it clean without re-reading it; otherwise the
// stat data stays zero and git will compare content itself.
func newEntry(rel, abs string, id plumbing.Hash, mode uint32, data []byte) *index.Entry {
	e := &index.Entry{Name: rel, Hash: id, Mode: filemode.FileMode(mode)}
	fi, err := os.Lstat(abs)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(data)) {
		return e
	}
	if exec := fi.Mode()&0o111 != 0; exec != (mode == modeExec) {
		return e
	}
	// Stat before reading: a write after the stat changes mtime, so git
	// notices it even though we compared older content.
	got, err := os.ReadFile(abs)
	if err != nil || !bytes.Equal(got, data) {
		return e
	}
	fillStat(e, fi)
	return e
}
