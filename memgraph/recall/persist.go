package recall

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// A built index is saved so that the next start loads it instead of
// tokenizing every memory again. The file is
//
//	"MMRI" | version u32 | key [32] | payload | sha256 of all before [32]
//
// and the payload is, per document (sorted by path): its Doc (strings as
// uvarint length and bytes), the field lengths and its distinct terms,
// sorted, with their per-field counts. The key says what the index was
// made with (Key): a file whose key, version or checksum differs is
// ignored and the index built as before.

// persistVersion is bumped when the format changes.
const persistVersion = 1

var persistMagic = []byte("MMRI")

// ErrStale is returned by Load for a file that is not an index of what
// the caller has now: another key, another version, a bad checksum or
// content that does not decode. The caller builds instead.
var ErrStale = errors.New("saved recall index is stale or corrupt")

// ErrNotOwner is returned by SaveFile when this process is not the owner
// of the directory the file would be written in.
var ErrNotOwner = errors.New("recall index not saved: the repository belongs to another user")

// Key names how an index's terms were made: the format's version and a
// digest of the tokenizer's output on a probe sentence. A saved index of
// another key is ignored. Which documents it holds is not part of the key:
// Reconcile brings a loaded index to the memories there are now, one
// document at a time, so that a start after a few changes (an access
// log's use count, a new memory) re-tokenizes those alone.
type Key [32]byte

// tokenizerProbe is tokenized into every Key, so a change of the
// tokenizer or the stemmer makes every saved index stale by itself.
const tokenizerProbe = "The user's daughters were running marathons; allergic to peanuts — café, naïve, 2026-12-01 x86_64"

// CurrentKey is the key of an index this build of recall makes.
func CurrentKey() Key {
	var buf []byte
	buf = binary.AppendUvarint(buf, persistVersion)
	eachTerm(tokenizerProbe, func(t string) { buf = appendString(buf, t) })
	return sha256.Sum256(buf)
}

// Reconcile makes the index hold exactly docs: a document that differs
// from the indexed one (or is new) is put, an indexed one not in docs is
// deleted. It returns how many it put or deleted. An equal document takes
// the caller's strings, so that after a Load the index shares the text
// with the caller's memories instead of holding the file's copy.
func (ix *Index) Reconcile(docs []Doc) int {
	keep := make(map[string]bool, len(docs))
	changed := 0
	for _, d := range docs {
		keep[d.Path] = true
		ix.mu.Lock()
		e := ix.byPath[d.Path]
		same := e != nil && e.doc == d
		if same {
			e.doc = d
			ix.meta[e.id].kind = d.Kind
			delete(ix.byPath, d.Path) // the key too is the caller's string
			ix.byPath[d.Path] = e
		}
		ix.mu.Unlock()
		if !same {
			ix.Put(d)
			changed++
		}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for p, e := range ix.byPath {
		if !keep[p] {
			ix.deleteLocked(e)
			changed++
		}
	}
	return changed
}

// Marshal renders the index as a saved file for key.
func (ix *Index) Marshal(key Key) []byte {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	paths := make([]string, 0, len(ix.byPath))
	for p := range ix.byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	order := make(map[int32]int, len(paths)) // id -> position in the file
	buf := append([]byte(nil), persistMagic...)
	buf = binary.BigEndian.AppendUint32(buf, persistVersion)
	buf = append(buf, key[:]...)
	buf = binary.AppendUvarint(buf, uint64(len(paths)))
	for i, p := range paths {
		e := ix.byPath[p]
		order[e.id] = i
		buf = appendDoc(buf, e.doc)
		for _, l := range e.lens {
			buf = binary.AppendUvarint(buf, uint64(l))
		}
		buf = binary.AppendUvarint(buf, uint64(len(e.terms)))
	}
	terms := make([]string, 0, len(ix.postings))
	for t := range ix.postings {
		terms = append(terms, t)
	}
	sort.Strings(terms)
	buf = binary.AppendUvarint(buf, uint64(len(terms)))
	type at struct {
		doc int
		tf  [numFields]uint16
	}
	var ps []at
	for _, t := range terms {
		ps = ps[:0]
		for _, p := range ix.postings[t] {
			ps = append(ps, at{order[p.doc], p.tf})
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i].doc < ps[j].doc })
		buf = appendString(buf, t)
		buf = binary.AppendUvarint(buf, uint64(len(ps)))
		prev := -1
		for _, p := range ps {
			buf = binary.AppendUvarint(buf, uint64(p.doc-prev))
			prev = p.doc
			for _, tf := range p.tf {
				buf = binary.AppendUvarint(buf, uint64(tf))
			}
		}
	}
	sum := sha256.Sum256(buf)
	return append(buf, sum[:]...)
}

// Load replaces the index's documents by those of a saved file, when it is
// sound and was saved for key; otherwise it returns an error wrapping
// ErrStale and leaves the index as it was.
func (ix *Index) Load(b []byte, key Key) error {
	hdr := len(persistMagic) + 4 + len(key)
	if len(b) < hdr+sha256.Size || !bytes.Equal(b[:4], persistMagic) {
		return fmt.Errorf("%w: not a saved index", ErrStale)
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if binary.BigEndian.Uint32(b[4:]) != persistVersion {
		return fmt.Errorf("%w: version %d", ErrStale, binary.BigEndian.Uint32(b[4:]))
	}
	if !bytes.Equal(b[8:hdr], key[:]) {
		return fmt.Errorf("%w: made by another tokenizer", ErrStale)
	}
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return fmt.Errorf("%w: checksum", ErrStale)
	}
	fresh, err := decodeIndex(string(body[hdr:]))
	if err != nil {
		return err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.byPath, ix.byID, ix.meta, ix.free = fresh.byPath, fresh.byID, fresh.meta, nil
	ix.postings, ix.prefixes, ix.sumLen = fresh.postings, fresh.prefixes, fresh.sumLen
	if ix.vectors != nil {
		for _, e := range ix.byID {
			ix.vectors.attach(e, vecState{})
		}
	}
	return nil
}

// decodeIndex parses the payload of a saved index into a new one (no
// expander, no vectors). Its documents' strings are pieces of b (one copy
// of the file, not one allocation per string) until Reconcile swaps them
// for the caller's; terms are copied once each. Paths must be strictly
// increasing, and so must the terms and each term's documents, with each
// document holding as many terms as it says: what Marshal writes, and
// what the index's removal relies on (sorted terms per entry).
func decodeIndex(b string) (*Index, error) {
	d := decoder{b: b}
	n := d.count()
	ix := New()
	ix.byID, ix.meta = make([]*entry, 0, n), make([]docMeta, 0, n)
	for i := 0; i < n && d.err == nil; i++ {
		doc := d.doc()
		if i > 0 && doc.Path <= ix.byID[i-1].doc.Path {
			d.fail("paths out of order")
		}
		e := &entry{id: int32(i), doc: doc}
		for f := range e.lens {
			e.lens[f] = int32(d.uint(1 << 31))
			ix.sumLen[f] += int64(e.lens[f])
		}
		nt := d.count()
		e.terms, e.pos = make([]string, 0, nt), make([]int32, 0, nt)
		ix.byID = append(ix.byID, e)
		ix.byPath[doc.Path] = e
		m := docMeta{prior: float32(1 + usePrior*math.Log1p(float64(max(doc.Uses, 0)))), active: doc.Active, live: true, kind: doc.Kind}
		for f := range e.lens {
			m.lens[f] = float32(e.lens[f])
		}
		ix.meta = append(ix.meta, m)
	}
	d.postings(ix)
	for _, e := range ix.byID {
		if d.err == nil && len(e.terms) != cap(e.terms) {
			d.fail("term count")
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	return ix, d.err
}

// postings reads the vocabulary and each term's postings into ix, whose
// documents are read.
func (d *decoder) postings(ix *Index) {
	nv := d.count()
	prevTerm := ""
	for v := 0; v < nv && d.err == nil; v++ {
		t := strings.Clone(d.str()) // not a piece of the file: kept for good
		if t == "" || v > 0 && t <= prevTerm {
			d.fail("terms out of order")
			return
		}
		prevTerm = t
		np := d.count()
		ps := make([]posting, 0, np)
		doc := -1
		for k := 0; k < np && d.err == nil; k++ {
			doc += int(d.uint(uint64(len(ix.byID) - doc))) // a delta: 0 is caught below
			if doc < 0 || doc >= len(ix.byID) || k > 0 && doc == int(ps[k-1].doc) {
				d.fail("posting out of order")
				return
			}
			e := ix.byID[doc]
			if len(e.terms) == cap(e.terms) {
				d.fail("term count")
				return
			}
			p := posting{doc: int32(doc)}
			for f := range p.tf {
				p.tf[f] = uint16(d.uint(1 << 16))
			}
			e.terms, e.pos = append(e.terms, t), append(e.pos, int32(k))
			ps = append(ps, p)
		}
		if len(ps) > 0 {
			ix.postings[t] = ps
			ix.addPrefix(t)
		}
	}
}

// decoder reads uvarints and strings, remembering the first error.
type decoder struct {
	b   string
	err error
}

func (d *decoder) fail(why string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrStale, why)
	}
	d.b = ""
}

// uint reads a uvarint below limit.
func (d *decoder) uint(limit uint64) uint64 {
	v, n := uvarint(d.b)
	if n <= 0 || v >= limit {
		d.fail("bad number")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a number of items, each at least one byte long.
func (d *decoder) count() int { return int(d.uint(uint64(len(d.b)) + 1)) }

func (d *decoder) str() string {
	n := d.count()
	if d.err != nil || n > len(d.b) {
		d.fail("short string")
		return ""
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) doc() Doc {
	var x Doc
	for _, p := range []*string{&x.Path, &x.Kind, &x.Title, &x.Description, &x.Fact, &x.Episode, &x.Keywords, &x.Status} {
		*p = d.str()
	}
	x.Active = d.uint(2) == 1
	x.Uses = int(d.uint(1 << 31))
	return x
}

// uvarint is binary.Uvarint over a string.
func uvarint(s string) (uint64, int) {
	var x uint64
	var sh uint
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				return 0, -1
			}
			return x | uint64(c)<<sh, i + 1
		}
		x |= uint64(c&0x7f) << sh
		sh += 7
	}
	return 0, 0
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendDoc(b []byte, d Doc) []byte {
	for _, s := range []string{d.Path, d.Kind, d.Title, d.Description, d.Fact, d.Episode, d.Keywords, d.Status} {
		b = appendString(b, s)
	}
	active := uint64(0)
	if d.Active {
		active = 1
	}
	b = binary.AppendUvarint(b, active)
	return binary.AppendUvarint(b, uint64(min(max(d.Uses, 0), 1<<31-1)))
}

// maxSaved bounds what LoadFile reads: far above 10,000 memories' index.
const maxSaved = 1 << 30

// SaveFile writes the index for key to path, mode 0600, atomically,
// creating path's directory (0700) when needed.
func (ix *Index) SaveFile(path string, key Key) error {
	return SaveFile(path, ix.Marshal(key))
}

// SaveFile writes a Marshal'd index to path, as Index.SaveFile does. It
// writes only as the owner of the closest existing directory above path
// (the repository's git directory), so root serving another user's
// repository leaves no file of its own there: ErrNotOwner.
func SaveFile(path string, data []byte) error {
	if !ownsClosest(filepath.Dir(path)) {
		return ErrNotOwner
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data, 0o600)
}

// LoadFile loads the index saved at path for key (see Load). A file that
// is missing, not a regular file, readable or writable by others than its
// owner, or owned by someone else than the owner of its directory is
// never read: it wraps ErrStale too (a missing one fs.ErrNotExist).
func (ix *Index) LoadFile(path string, key Key) error {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 || !sameOwner(fi, di) || fi.Size() > maxSaved {
		return fmt.Errorf("%w: %s is not the repository owner's private file", ErrStale, path)
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return err
	}
	return ix.Load(b, key)
}
