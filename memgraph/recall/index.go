package recall

import (
	"math"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Doc is one memory as recall sees it.
type Doc struct {
	Path        string // repo-relative, e.g. user_memory/has-dog-pixel.md
	Kind        string // "user", "character", …
	Title       string
	Description string
	Fact        string
	Episode     string
	// Keywords are words a question may use that the text does not: the
	// memory's topic, the words of its file name, its tags and the
	// search terms extraction stored as keywords.
	Keywords string
	Active   bool   // only active docs are returned unless Options.All
	Status   string // lifecycle status as written ("" for active)
	Uses     int    // access-log use count, a mild prior
}

// Options shape one search.
type Options struct {
	K    int    // number of hits; 0 means 10
	Kind string // only docs of this kind; "" means any
	All  bool   // include retired (non-active) docs
	// Literal looks for the question's own words only, not those the
	// index's expander (WordNet) relates to them: one query's choice,
	// whatever the shared index is set to.
	Literal bool
}

// Hit is one search result, best first.
type Hit struct {
	Path        string
	Kind        string
	Title       string
	Description string
	Snippet     string // the sentence of the fact (or description) that matches best
	Status      string
	Score       float64
}

// field is one weighted part of a document.
type field uint8

const (
	fTitle field = iota
	fDesc
	fFact
	fEpisode
	fKeys
	numFields
)

// posting is one document's occurrences of a term, per field.
type posting struct {
	doc int32
	tf  [numFields]uint16
}

// docMeta is the per-document data of the scoring loop.
type docMeta struct {
	lens   [numFields]float32
	prior  float32 // use-count prior, a factor >= 1
	active bool
	live   bool // false for a freed id
	kind   string
}

// entry is an indexed document.
type entry struct {
	id   int32
	doc  Doc
	lens [numFields]int32
	// terms are the document's distinct terms, sorted; pos[i] is the index
	// of its posting in postings[terms[i]], so removal is a swap with the
	// last posting: O(1) per term instead of a scan of a list that may hold
	// every document.
	terms []string
	pos   []int32
	vec   vecState
}

// slot returns the index of term t in e.terms (t must be there).
func (e *entry) slot(t string) int {
	i, _ := slices.BinarySearch(e.terms, t)
	return i
}

// builder counts the terms of one document; pooled, since a Put would
// otherwise allocate a map and its buckets each time.
type builder struct {
	idx   map[string]int
	tfs   [][numFields]uint16
	terms []string
}

var builders = sync.Pool{New: func() any { return &builder{idx: map[string]int{}} }}

// Index is an incremental inverted index over Docs. Safe for concurrent use.
type Index struct {
	mu     sync.RWMutex
	byPath map[string]*entry
	byID   []*entry // nil where freed
	// meta mirrors what scoring needs of each doc in a dense slice by id,
	// so the loop over a long postings list stays in cache instead of
	// chasing an entry pointer per posting.
	meta     []docMeta
	free     []int32
	postings map[string][]posting
	// prefixes groups terms by their first prefixLen runes, to find the
	// morphological variants the stemmer leaves apart ("allergi" from
	// "allergies", "allerg" from "allergic") without scanning the vocabulary.
	prefixes map[string]map[string]struct{}
	sumLen   [numFields]int64

	vectors  *vectorIndex // nil without an Embedder
	expander Expander     // nil: the question's own words only
	pool     sync.Pool    // *scratch
}

// New returns an empty index.
func New() *Index {
	return &Index{
		byPath:   map[string]*entry{},
		postings: map[string][]posting{},
		prefixes: map[string]map[string]struct{}{},
	}
}

// Len returns the number of indexed documents, active or not.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.byPath)
}

// Put adds or replaces the document at d.Path. Its cost is proportional to
// the document's length (plus the old version's when it replaces one).
func (ix *Index) Put(d Doc) {
	fields := [numFields]string{d.Title, d.Description, d.Fact, d.Episode, d.Keywords}
	b := builders.Get().(*builder)
	defer func() {
		clear(b.idx)
		b.tfs, b.terms = b.tfs[:0], b.terms[:0]
		builders.Put(b)
	}()
	var lens [numFields]int32
	for f, text := range fields {
		eachTerm(text, func(t string) {
			i, ok := b.idx[t]
			if !ok {
				i = len(b.tfs)
				b.idx[t] = i
				b.tfs = append(b.tfs, [numFields]uint16{})
				b.terms = append(b.terms, t)
			}
			if b.tfs[i][f] < 0xffff {
				b.tfs[i][f]++
			}
			lens[f]++
		})
	}
	terms := slices.Clone(b.terms)
	slices.Sort(terms)

	ix.mu.Lock()
	defer ix.mu.Unlock()
	var prevVec vecState
	if old := ix.byPath[d.Path]; old != nil {
		prevVec = old.vec
		ix.deleteLocked(old)
	}
	var id int32
	if n := len(ix.free); n > 0 {
		id = ix.free[n-1]
		ix.free = ix.free[:n-1]
	} else {
		id = int32(len(ix.byID))
		ix.byID = append(ix.byID, nil)
		ix.meta = append(ix.meta, docMeta{})
	}
	e := &entry{id: id, doc: d, lens: lens, terms: terms, pos: make([]int32, len(terms))}
	for i, t := range terms {
		ps := ix.postings[t]
		if len(ps) == 0 {
			ix.addPrefix(t)
		}
		e.pos[i] = int32(len(ps))
		ix.postings[t] = append(ps, posting{doc: id, tf: b.tfs[b.idx[t]]})
	}
	for f := range lens {
		ix.sumLen[f] += int64(lens[f])
	}
	ix.byID[id] = e
	m := docMeta{
		prior:  float32(1 + usePrior*math.Log1p(float64(max(d.Uses, 0)))),
		active: d.Active,
		live:   true,
		kind:   d.Kind,
	}
	for f := range lens {
		m.lens[f] = float32(lens[f])
	}
	ix.meta[id] = m
	ix.byPath[d.Path] = e
	if ix.vectors != nil {
		ix.vectors.attach(e, prevVec)
	}
}

// Delete removes the document at path, if indexed.
func (ix *Index) Delete(path string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if e := ix.byPath[path]; e != nil {
		ix.deleteLocked(e)
	}
}

func (ix *Index) deleteLocked(e *entry) {
	for k, t := range e.terms {
		i := e.pos[k]
		ps := ix.postings[t]
		last := len(ps) - 1
		if int(i) != last {
			moved := ps[last]
			ps[i] = moved
			m := ix.byID[moved.doc]
			m.pos[m.slot(t)] = i
		}
		ps = ps[:last]
		if len(ps) == 0 {
			delete(ix.postings, t)
			ix.removePrefix(t)
		} else {
			ix.postings[t] = ps
		}
	}
	for f := range e.lens {
		ix.sumLen[f] -= int64(e.lens[f])
	}
	delete(ix.byPath, e.doc.Path)
	ix.byID[e.id] = nil
	ix.meta[e.id] = docMeta{}
	ix.free = append(ix.free, e.id)
}

// prefixLen is the length in runes of the prefix that groups variant terms.
const prefixLen = 4

func termPrefix(t string) (string, bool) {
	n := 0
	for i := range t {
		if n == prefixLen {
			return t[:i], true
		}
		n++
	}
	return t, n == prefixLen
}

func (ix *Index) addPrefix(t string) {
	p, ok := termPrefix(t)
	if !ok {
		return
	}
	m := ix.prefixes[p]
	if m == nil {
		m = map[string]struct{}{}
		ix.prefixes[p] = m
	}
	m[t] = struct{}{}
}

func (ix *Index) removePrefix(t string) {
	p, ok := termPrefix(t)
	if !ok {
		return
	}
	if m := ix.prefixes[p]; m != nil {
		delete(m, t)
		if len(m) == 0 {
			delete(ix.prefixes, p)
		}
	}
}

// variants returns the indexed terms that are morphological variants of
// the stem q: one is a prefix of the other, the shorter has at least
// prefixLen runes, and they differ by at most maxVariantSuffix runes.
// Porter2 leaves such pairs apart for derivations ("allergic"/"allergies",
// "programmer"/"programming", "swimmer"/"swimming").
func (ix *Index) variants(q string) []string {
	p, ok := termPrefix(q)
	if !ok {
		return nil
	}
	var out []string
	for t := range ix.prefixes[p] {
		if t != q && isVariant(q, t) {
			out = append(out, t)
		}
	}
	return out
}

// isVariant reports whether the stems a and b are morphological variants
// by the rule of variants. Equal stems are not variants of each other.
func isVariant(a, b string) bool {
	al, bl := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	short, long := a, b
	if bl < al {
		short, long = b, a
	}
	d := al - bl
	if d < 0 {
		d = -d
	}
	return a != b && d <= maxVariantSuffix && utf8.RuneCountInString(short) >= prefixLen && strings.HasPrefix(long, short)
}

const maxVariantSuffix = 3
