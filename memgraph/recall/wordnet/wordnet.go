// Package wordnet reads the Princeton WordNet database in its documented
// text format (wndb(5WN), as Debian's wordnet-base installs it under
// /usr/share/wordnet): the sorted index.POS files that map a lemma to its
// synsets, the data.POS files that hold each synset at its byte offset, and
// the POS.exc files of irregular forms.
//
// Nothing is loaded into the heap: a lemma is found by binary search over
// the index file and a synset read at its offset, both with pread through
// the page cache, so a process that asks for a few words costs a few pages,
// not the database's 30 MB. Files are opened on first use; a missing
// database answers nothing.
package wordnet

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// DefaultDir is where Debian's wordnet-base installs the database.
const DefaultDir = "/usr/share/wordnet"

// Relation is how a related word relates to the asked one.
type Relation uint8

const (
	Synonym  Relation = iota // a word of the same synset
	Hypernym                 // a word of a more general synset ("beverage" for "coffee")
	Hyponym                  // a word of a more specific synset ("coffee" for "beverage")
)

// Related is one word related to the asked one.
type Related struct {
	Lemma string // lower-case; multi-word lemmas keep WordNet's "_" ("ice_cream")
	Rel   Relation
}

// pos is one part of speech: its index and data file.
type pos struct {
	name  string // "noun", "verb", "adj", "adv"
	index *file
	data  *file
	exc   *file
}

// file is an open database file and its size.
type file struct {
	r    io.ReaderAt
	c    io.Closer
	size int64
}

// WordNet is a database directory. Safe for concurrent use.
type WordNet struct {
	dir  string
	once sync.Once
	err  error
	pos  map[byte]*pos // 'n', 'v', 'a', 'r'; 's' (satellite adjective) reads data.adj

	formsOnce    sync.Once
	bases, forms map[string][]string // Forms' lists, read on first use
}

// ErrNotInstalled is returned by Open when dir holds no WordNet database.
var ErrNotInstalled = errors.New("wordnet: no database (index.noun, data.noun) in the directory")

// New returns the database in dir, opened on first use.
func New(dir string) *WordNet { return &WordNet{dir: dir} }

// Open opens the database in dir now, to report whether it is there.
func Open(dir string) (*WordNet, error) {
	w := New(dir)
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

// Installed reports whether dir holds a WordNet database, without opening it.
func Installed(dir string) bool {
	for _, n := range []string{"index.noun", "data.noun"} {
		if st, err := os.Stat(filepath.Join(dir, n)); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	return true
}

func (w *WordNet) open() error {
	w.once.Do(func() {
		if !Installed(w.dir) {
			w.err = ErrNotInstalled
			return
		}
		w.pos = map[byte]*pos{}
		for _, p := range []struct {
			c    byte
			name string
		}{{'n', "noun"}, {'v', "verb"}, {'a', "adj"}, {'r', "adv"}} {
			x := &pos{name: p.name}
			x.index, _ = openFile(filepath.Join(w.dir, "index."+p.name))
			x.data, _ = openFile(filepath.Join(w.dir, "data."+p.name))
			x.exc, _ = openFile(filepath.Join(w.dir, p.name+".exc"))
			if x.index != nil && x.data != nil {
				w.pos[p.c] = x
			}
		}
		if a := w.pos['a']; a != nil {
			w.pos['s'] = a
		}
		if w.pos['n'] == nil {
			w.err = ErrNotInstalled
		}
	})
	return w.err
}

func openFile(name string) (*file, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("wordnet: " + name + " is not a regular file")
	}
	return &file{r: f, c: f, size: st.Size()}, nil
}

// Close closes the database files.
func (w *WordNet) Close() error {
	w.once.Do(func() { w.err = os.ErrClosed })
	seen := map[*pos]bool{}
	for _, p := range w.pos {
		if seen[p] {
			continue
		}
		seen[p] = true
		for _, f := range []*file{p.index, p.data, p.exc} {
			if f != nil && f.c != nil {
				f.c.Close()
			}
		}
	}
	return nil
}

// Options bound what Related reads.
type Options struct {
	// Senses is how many senses of each lemma are followed, most frequent
	// first (WordNet orders them so); 0 means 3.
	Senses int
	// Max bounds the words returned; 0 means 64.
	Max int
	// POS are the parts of speech looked at, of "nvar"; "" means "nv".
	POS string
}

// maxLine bounds one line of a database file; the longest in WordNet 3.0
// are a few kilobytes.
const maxLine = 1 << 16

// Related returns the words related to word (any inflected form: "drinks",
// "children", "ate"): the other words of its synsets, and the words of
// their direct hypernyms and hyponyms, synonyms first. It returns nothing
// when the database is missing or the word unknown.
func (w *WordNet) Related(word string, opt Options) []Related {
	if opt.Senses <= 0 {
		opt.Senses = 3
	}
	if opt.Max <= 0 {
		opt.Max = 64
	}
	if opt.POS == "" {
		opt.POS = "nv"
	}
	word = strings.ToLower(strings.TrimSpace(word))
	if word == "" || len(word) > 64 || strings.ContainsAny(word, " \n\r\t") || w.open() != nil {
		return nil
	}
	var syn, rel []Related
	seen := map[string]bool{word: true}
	add := func(list *[]Related, lemma string, r Relation) {
		lemma = strings.ToLower(lemma)
		if !seen[lemma] {
			seen[lemma] = true
			*list = append(*list, Related{Lemma: lemma, Rel: r})
		}
	}
	for i := 0; i < len(opt.POS); i++ {
		p := w.pos[opt.POS[i]]
		if p == nil {
			continue
		}
		for _, lemma := range w.lemmas(p, word) {
			seen[lemma] = true
			offs := indexOffsets(searchLine(p.index, lemma))
			for _, off := range offs[:min(len(offs), opt.Senses)] {
				s, ok := parseSynset(readLine(p.data, off))
				if !ok {
					continue
				}
				for _, sw := range s.words {
					add(&syn, sw, Synonym)
				}
				for _, ptr := range s.ptrs {
					var r Relation
					switch ptr.sym {
					case "@", "@i":
						r = Hypernym
					case "~", "~i":
						r = Hyponym
					default:
						continue
					}
					q := w.pos[ptr.pos]
					if q == nil {
						continue
					}
					if t, ok := parseSynset(readLine(q.data, ptr.off)); ok {
						for _, tw := range t.words {
							add(&rel, tw, r)
						}
					}
				}
			}
		}
	}
	out := append(syn, rel...)
	return out[:min(len(out), opt.Max)]
}

// Detachment rules of WordNet's morphy (morph(7WN)), by part of speech.
var detach = map[string][][2]string{
	"noun": {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	"verb": {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	"adj":  {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
}

// lemmas returns the base forms of word in p's index: the word itself,
// its irregular base forms (POS.exc), and what the detachment rules give.
func (w *WordNet) lemmas(p *pos, word string) []string {
	var out []string
	try := func(l string) {
		if l == "" {
			return
		}
		for _, o := range out {
			if o == l {
				return
			}
		}
		if searchLine(p.index, l) != nil {
			out = append(out, l)
		}
	}
	try(word)
	if f := bytes.Fields(searchLine(p.exc, word)); len(f) > 1 {
		for _, b := range f[1:] {
			try(string(b))
		}
	}
	for _, r := range detach[p.name] {
		if base, ok := strings.CutSuffix(word, r[0]); ok {
			try(base + r[1])
		}
	}
	return out
}

// searchLine finds by binary search the line of the sorted file f whose
// first field is key, or returns nil. Lines that start with a space (the
// licence at the top of index files) sort first and never match.
func searchLine(f *file, key string) []byte {
	if f == nil || key == "" {
		return nil
	}
	lo, hi := int64(0), f.size // lo is always the start of a line
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := mid
		if mid > lo {
			// The first line that starts after mid.
			nl := indexByteAt(f, mid-1, hi)
			if nl < 0 {
				return scan(f, lo, hi, key)
			}
			start = nl + 1
		}
		if start >= hi {
			return scan(f, lo, hi, key)
		}
		line := readLine(f, start)
		if line == nil {
			return nil
		}
		switch c := compareKey(line, key); {
		case c == 0:
			return line
		case c > 0:
			hi = start
		default:
			lo = start + int64(len(line)) + 1
		}
	}
	return nil
}

// scan reads the lines that start in [lo, hi) one by one.
func scan(f *file, lo, hi int64, key string) []byte {
	for lo < hi {
		line := readLine(f, lo)
		if line == nil {
			return nil
		}
		if compareKey(line, key) == 0 {
			return line
		}
		lo += int64(len(line)) + 1
	}
	return nil
}

// compareKey compares the first field of line with key.
func compareKey(line []byte, key string) int {
	k := line
	if i := bytes.IndexByte(line, ' '); i >= 0 {
		k = line[:i]
	}
	return bytes.Compare(k, []byte(key))
}

// indexByteAt returns the offset of the first '\n' at or after off and
// before limit, or -1.
func indexByteAt(f *file, off, limit int64) int64 {
	var buf [512]byte
	for off < limit {
		n, err := f.r.ReadAt(buf[:min(int64(len(buf)), limit-off)], off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return off + int64(i)
		}
		if n == 0 || err != nil && err != io.EOF {
			return -1
		}
		off += int64(n)
	}
	return -1
}

// readLine returns the line that starts at off, without its newline, or
// nil when off is out of the file or the line is longer than maxLine.
func readLine(f *file, off int64) []byte {
	if f == nil || off < 0 || off >= f.size {
		return nil
	}
	buf := make([]byte, 0, 512)
	for len(buf) < maxLine {
		chunk := buf[len(buf):min(cap(buf), maxLine)]
		n, err := f.r.ReadAt(chunk, off+int64(len(buf)))
		if i := bytes.IndexByte(chunk[:n], '\n'); i >= 0 {
			return buf[:len(buf)+i]
		}
		buf = buf[:len(buf)+n]
		if err != nil || n == 0 {
			if len(buf) == 0 {
				return nil
			}
			return buf // the last line, without a newline
		}
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
	}
	return nil
}

// indexOffsets returns the synset offsets of an index line:
// "lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt
// synset_offset...", most frequent sense first.
func indexOffsets(line []byte) []int64 {
	f := strings.Fields(string(line))
	if len(f) < 4 {
		return nil
	}
	pcnt, err := strconv.Atoi(f[3])
	if err != nil || pcnt < 0 || 4+pcnt+2 > len(f) {
		return nil
	}
	var out []int64
	for _, s := range f[4+pcnt+2:] {
		off, err := strconv.ParseInt(s, 10, 64)
		if err != nil || off < 0 {
			return out
		}
		out = append(out, off)
	}
	return out
}

// synset is the part of a data line Related uses.
type synset struct {
	words []string
	ptrs  []pointer
}

type pointer struct {
	sym string // "@" hypernym, "~" hyponym, ...
	off int64
	pos byte
}

// parseSynset parses a data line: "synset_offset lex_filenum ss_type
// w_cnt word lex_id [word lex_id...] p_cnt [ptr...] [frames...] | gloss",
// w_cnt in hexadecimal, p_cnt in decimal, each pointer "symbol offset pos
// source/target".
func parseSynset(line []byte) (synset, bool) {
	if i := bytes.Index(line, []byte(" | ")); i >= 0 {
		line = line[:i]
	}
	f := strings.Fields(string(line))
	if len(f) < 4 {
		return synset{}, false
	}
	wcnt, err := strconv.ParseUint(f[3], 16, 16)
	i := 4
	if err != nil || i+2*int(wcnt) >= len(f) {
		return synset{}, false
	}
	var s synset
	for range wcnt {
		wd := f[i]
		// Adjectives may carry a syntactic marker: "big(a)".
		if j := strings.IndexByte(wd, '('); j > 0 {
			wd = wd[:j]
		}
		s.words = append(s.words, wd)
		i += 2
	}
	pcnt, err := strconv.Atoi(f[i])
	i++
	if err != nil || pcnt < 0 || pcnt > (len(f)-i)/4 { // no overflow: pcnt may be huge
		return s, len(s.words) > 0
	}
	for range pcnt {
		off, err := strconv.ParseInt(f[i+1], 10, 64)
		if err == nil && off >= 0 && len(f[i+2]) == 1 {
			s.ptrs = append(s.ptrs, pointer{sym: f[i], off: off, pos: f[i+2][0]})
		}
		i += 4
	}
	return s, true
}

// Forms returns the irregular forms that share a base with word, by the
// verb.exc and noun.exc lists: "chose" gives "choose" and "chosen",
// "choose" gives "chose" and "chosen", "children" gives "child". Regular
// inflections are left to the caller's stemmer. The lists are read whole
// on first use (some 70 KB): finding a base's forms needs the reverse of
// their sorted order.
func (w *WordNet) Forms(word string) []string {
	word = strings.ToLower(strings.TrimSpace(word))
	if word == "" || w.open() != nil {
		return nil
	}
	w.formsOnce.Do(w.readForms)
	var out []string
	add := func(f string) {
		if f != word && !strings.ContainsAny(f, "_-") && !slicesContains(out, f) {
			out = append(out, f)
		}
	}
	for _, base := range append([]string{word}, w.bases[word]...) {
		add(base)
		for _, f := range w.forms[base] {
			add(f)
		}
	}
	return out
}

// readForms reads verb.exc and noun.exc into bases (form -> its bases)
// and forms (base -> its irregular forms).
func (w *WordNet) readForms() {
	w.bases, w.forms = map[string][]string{}, map[string][]string{}
	for _, c := range []byte{'v', 'n'} {
		p := w.pos[c]
		if p == nil || p.exc == nil || p.exc.size > maxExc {
			continue
		}
		b := make([]byte, p.exc.size)
		if _, err := p.exc.r.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
			continue
		}
		for line := range bytes.Lines(b) {
			f := strings.Fields(string(line))
			if len(f) < 2 {
				continue
			}
			for _, base := range f[1:] {
				w.bases[f[0]] = append(w.bases[f[0]], base)
				w.forms[base] = append(w.forms[base], f[0])
			}
		}
	}
}

// maxExc bounds an exceptions file read whole (WordNet 3.0's largest,
// noun.exc, is 40 KB).
const maxExc = 1 << 20

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
