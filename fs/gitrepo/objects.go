package gitrepo

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// Git file modes as they appear in trees and the index.
const (
	modeFile    uint32 = 0o100644
	modeExec    uint32 = 0o100755
	modeSymlink uint32 = 0o120000
	modeTree    uint32 = 0o040000
	modeGitlink uint32 = 0o160000
)

// treeEntry is one entry of a git tree object.
type treeEntry struct {
	name string
	mode uint32
	hash plumbing.Hash
}

func (e treeEntry) isTree() bool { return e.mode == modeTree }

// hashObject returns the git object id of data stored as typ ("blob",
// "tree", "commit").
func hashObject(typ string, data []byte) plumbing.Hash {
	h := sha1.New()
	h.Write([]byte(typ + " " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	var out plumbing.Hash
	copy(out[:], h.Sum(nil))
	return out
}

// writeObject stores data as a loose object and returns its id. An object
// that already exists as a loose object is not written again. Loose objects
// are compressed at zlib's fastest level, like git's core.looseCompression
// default.
func (r *Repo) writeObject(typ string, data []byte) (plumbing.Hash, error) {
	id := hashObject(typ, data)
	hex := id.String()
	dir := filepath.Join(r.objDir, hex[:2])
	final := filepath.Join(dir, hex[2:])
	if _, err := os.Stat(final); err == nil {
		return id, nil
	}
	if err := os.MkdirAll(dir, r.dirPerm()); err != nil {
		return id, err
	}
	f, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return id, err
	}
	tmp := f.Name()
	// flate emits many small writes; buffer them into a few syscalls.
	bw := bufio.NewWriterSize(f, 64<<10)
	zw := getZlib(typ, bw)
	defer putZlib(typ, zw)
	_, err = zw.Write([]byte(typ + " " + strconv.Itoa(len(data)) + "\x00"))
	if err == nil {
		_, err = zw.Write(data)
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, r.filePerm(false)&^0o222) // read-only, as git makes objects
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.Remove(tmp)
		return id, fmt.Errorf("write %s object %s: %w", typ, hex, err)
	}
	r.unsynced = append(r.unsynced, final)
	return id, nil
}

// Zlib writers allocate about a megabyte each, more than compressing a
// small object costs, so they are pooled. Trees use Huffman-only coding:
// a large directory's tree is rewritten on every commit that touches it,
// and its 20-byte hashes do not compress anyway, so skipping the LZ77
// search halves the commit time for a small loss in size.
var zlibPools = map[bool]*sync.Pool{
	false: {New: func() any { w, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed); return w }},
	true:  {New: func() any { w, _ := zlib.NewWriterLevel(nil, zlib.HuffmanOnly); return w }},
}

func getZlib(typ string, w io.Writer) *zlib.Writer {
	zw := zlibPools[typ == "tree"].Get().(*zlib.Writer)
	zw.Reset(w)
	return zw
}

func putZlib(typ string, zw *zlib.Writer) { zlibPools[typ == "tree"].Put(zw) }

// readObject returns the content of object id of type typ. When reading
// fails it reopens the storage once and tries again: a repack (ours in the
// background, or a "git gc") may have moved the object into a pack go-git
// has not indexed yet, or deleted a pack go-git had indexed ("packfile not
// found").
func (r *Repo) readObject(typ plumbing.ObjectType, id plumbing.Hash) ([]byte, error) {
	b, err := r.readObjectOnce(typ, id)
	for try := 0; err != nil && try < 3; try++ {
		rr, oerr := git.PlainOpenWithOptions(r.dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
		if oerr != nil {
			break
		}
		r.store = rr.Storer
		b, err = r.readObjectOnce(typ, id)
	}
	return b, err
}

func (r *Repo) readObjectOnce(typ plumbing.ObjectType, id plumbing.Hash) ([]byte, error) {
	obj, err := r.store.EncodedObject(typ, id)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", typ, id, err)
	}
	rd, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// parseTree decodes a raw tree object.
func parseTree(b []byte) ([]treeEntry, error) {
	var out []treeEntry
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		if sp < 0 {
			return nil, errors.New("malformed tree: no mode")
		}
		mode, err := strconv.ParseUint(string(b[:sp]), 8, 32)
		if err != nil {
			return nil, fmt.Errorf("malformed tree mode %q", b[:sp])
		}
		b = b[sp+1:]
		nul := bytes.IndexByte(b, 0)
		if nul < 0 || len(b) < nul+1+20 {
			return nil, errors.New("malformed tree: truncated entry")
		}
		e := treeEntry{name: string(b[:nul]), mode: uint32(mode)}
		copy(e.hash[:], b[nul+1:nul+21])
		out = append(out, e)
		b = b[nul+21:]
	}
	return out, nil
}

// encodeTree renders entries, already in git's order, as a raw tree object.
func encodeTree(entries []treeEntry) []byte {
	size := 0
	for _, e := range entries {
		size += 7 + len(e.name) + 1 + 20
	}
	var buf bytes.Buffer
	buf.Grow(size)
	for _, e := range entries {
		buf.WriteString(strconv.FormatUint(uint64(e.mode), 8))
		buf.WriteByte(' ')
		buf.WriteString(e.name)
		buf.WriteByte(0)
		buf.Write(e.hash[:])
	}
	return buf.Bytes()
}

// sortTree orders entries as git does: by name, comparing a tree's name as
// if it ended in '/'.
func sortTree(entries []treeEntry) {
	sort.Slice(entries, func(i, j int) bool {
		return treeLess(entries[i], entries[j])
	})
}

func treeLess(a, b treeEntry) bool {
	an, bn := a.name, b.name
	n := min(len(an), len(bn))
	if an[:n] != bn[:n] {
		return an[:n] < bn[:n]
	}
	ac, bc := byte(0), byte(0)
	if len(an) > n {
		ac = an[n]
	} else if a.isTree() {
		ac = '/'
	}
	if len(bn) > n {
		bc = bn[n]
	} else if b.isTree() {
		bc = '/'
	}
	return ac < bc
}

// treeCache keeps decoded trees by id. Tree objects are immutable, so an
// entry never goes stale. It has two generations: when the current one
// holds more than treeCacheMax entries in all it becomes the old one and
// the previous old one is dropped; a hit in the old generation moves back
// to the current one. That keeps the trees in use (HEAD's, on every
// commit) and bounds memory (a commit in a 7,000-file directory adds a
// 7,000-entry version of that tree).
type treeCache struct {
	mu       sync.Mutex
	cur, old map[plumbing.Hash][]treeEntry
	total    int // entries in cur
}

const treeCacheMax = 100_000 // tree entries per generation, about 5 MB

func newTreeCache() treeCache { return treeCache{cur: map[plumbing.Hash][]treeEntry{}} }

func (c *treeCache) get(id plumbing.Hash) ([]treeEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.cur[id]; ok {
		return e, true
	}
	e, ok := c.old[id]
	if ok {
		c.putLocked(id, e)
	}
	return e, ok
}

func (c *treeCache) put(id plumbing.Hash, e []treeEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.putLocked(id, e)
}

func (c *treeCache) putLocked(id plumbing.Hash, e []treeEntry) {
	if _, ok := c.cur[id]; ok {
		return
	}
	if c.total+len(e) > treeCacheMax {
		c.old, c.cur, c.total = c.cur, map[plumbing.Hash][]treeEntry{}, 0
	}
	c.cur[id] = e
	c.total += len(e)
}

// readTree returns the entries of tree id. The slice is shared: callers
// must copy it before changing it.
func (r *Repo) readTree(id plumbing.Hash) ([]treeEntry, error) {
	if e, ok := r.trees.get(id); ok {
		return e, nil
	}
	b, err := r.readObject(plumbing.TreeObject, id)
	if err != nil {
		return nil, err
	}
	e, err := parseTree(b)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w", id, err)
	}
	r.trees.put(id, e)
	return e, nil
}

// writeTree stores entries as a tree object and caches its decoded form.
func (r *Repo) writeTree(entries []treeEntry) (plumbing.Hash, error) {
	id, err := r.writeObject("tree", encodeTree(entries))
	if err == nil {
		r.trees.put(id, entries)
	}
	return id, err
}

// findEntry returns the entry called name in a sorted tree. Trees are
// sorted with directories as "name/", so a binary search by plain name
// is not exact; a linear scan is cheap next to decoding the tree.
func findEntry(entries []treeEntry, name string) (int, bool) {
	for i := range entries {
		if entries[i].name == name {
			return i, true
		}
	}
	return -1, false
}

// lookup returns the entry at rel (slash-separated) under tree root.
func (r *Repo) lookup(root plumbing.Hash, rel string) (treeEntry, bool, error) {
	if root.IsZero() {
		return treeEntry{}, false, nil
	}
	cur := root
	for {
		entries, err := r.readTree(cur)
		if err != nil {
			return treeEntry{}, false, err
		}
		name, rest, more := cut(rel)
		i, ok := findEntry(entries, name)
		if !ok {
			return treeEntry{}, false, nil
		}
		if !more {
			return entries[i], true, nil
		}
		if !entries[i].isTree() {
			return treeEntry{}, false, nil
		}
		cur, rel = entries[i].hash, rest
	}
}

// cut splits "a/b/c" into "a", "b/c", true.
func cut(rel string) (string, string, bool) {
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' {
			return rel[:i], rel[i+1:], true
		}
	}
	return rel, "", false
}
