package memgraph

import (
	"errors"
	"github.com/mindmount/mindmount/memgraph/subtree"
	"hash/maphash"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mindmount/mindmount/memgraph/recall"
)

// Graph is the in-memory model of one repository, built once by Scan and
// kept current by change events. Safe for concurrent use.
//
// Cost model: Update, Put, Remove and Rename of one file touch that file's
// entry plus a binary search and a slice move in the ranked list of its
// kind, never the rest of the repository. Index and Context never read
// files; their bytes are cached per version and rebuilt from per-memory
// index lines that are rendered once when the memory changes.
type Graph struct {
	// wmu serializes changes, so recall hooks and subscribers see them in
	// the order they happened. Readers never take it.
	wmu sync.Mutex

	mu       sync.RWMutex
	root     string
	tree     *subtree.Tree // root, opened: every read beneath it, no symlink followed
	files    map[string]*entry
	dirs     map[string]int // folder -> number of known files under it, so Remove of an unknown path costs nothing
	ranked   [2][]*item     // active user / character memories in rank order
	external []string       // sorted paths of active external memories (last valid version)
	listSize [3]int         // bytes of the ranked lines (user, character) and external entries, for the context budget
	system   []string       // sorted paths of system/** blocks with a valid version
	skills   []string       // sorted paths of active skills' SKILL.md (skill_graph.go)
	uses     skillUses      // how often each skill was read (skill_graph.go)
	bad      map[string]bool
	version  uint64
	subs     []func(changed []string)
	seed     maphash.Seed

	// The recall index is built on the first recall, or in the background
	// once a server asks (WarmRecall), never by Scan: a command that
	// never recalls never pays for it (recall.go).
	recall  *recall.Index
	rmu     sync.Mutex  // held while the index is built, and by each change's update of it
	rbuilt  atomic.Bool // the index holds every valid memory; changes keep it current
	rclosed atomic.Bool // Close was called: a build in progress stops
	rfile   string      // where the built index is saved and loaded ("": nowhere); under rmu

	cmu      sync.Mutex // guards the caches below
	idxCache map[idxKey]cached
	ctxCache map[int]cached

	settings      settingsCache // SettingsFile, re-read when it changes
	indexOverride atomic.Int64  // SetIndexTokens

	scopes atomic.Pointer[[]Scope] // attached teams (scope.go)
}

// idxKey names one cached index: its kind slot and byte budget (0: all).
type idxKey struct{ slot, max int }

// entry is what the graph knows about one memory path.
type entry struct {
	valid *item     // last valid version; nil when the file never was valid
	probs []Problem // problems of the current content on disk; nil when valid
	sum   uint64    // hash of the last content seen, to skip no-op events
	seen  bool
}

// item is one valid memory with its index line rendered once.
type item struct {
	m    *Memory
	line []byte // index line (user and character memories)
	desc string // one-line description for the external memory tree
}

type cached struct {
	version uint64
	b       []byte
}

// cacheGet returns the bytes cache holds under key for the graph's
// current version. The caller holds g.mu for reading.
func cacheGet[K comparable](g *Graph, cache map[K]cached, key K) ([]byte, bool) {
	g.cmu.Lock()
	c, ok := cache[key]
	g.cmu.Unlock()
	return c.b, ok && c.version == g.version
}

// cachePut caches b under key for the graph's current version and drops
// the entries of older versions. The caller holds g.mu for reading.
func cachePut[K comparable](g *Graph, cache map[K]cached, key K, b []byte) {
	g.cmu.Lock()
	for k, v := range cache {
		if v.version != g.version {
			delete(cache, k)
		}
	}
	cache[key] = cached{version: g.version, b: b}
	g.cmu.Unlock()
}

func rankSlot(k Kind) int {
	if k == KindCharacter {
		return 1
	}
	return 0
}

func newGraph(root string, tree *subtree.Tree) *Graph {
	return &Graph{root: root, tree: tree, files: map[string]*entry{}, dirs: map[string]int{}, bad: map[string]bool{}, ctxCache: map[int]cached{}, idxCache: map[idxKey]cached{}, seed: maphash.MakeSeed(), recall: newRecallIndex()}
}

// scanReaders is how many files Scan reads at once.
const scanReaders = 8

// Scan reads every memory file under root once and builds the graph.
// Unreadable or invalid files are recorded in Problems, not returned as
// errors; the error is for a root that cannot be walked at all.
func Scan(root string) (*Graph, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, errors.New(abs + " is not a directory")
	}
	tree, err := subtree.Open(abs)
	if err != nil {
		return nil, err
	}
	g := newGraph(abs, tree)
	rels, err := memoryFiles(tree)
	if err != nil {
		return nil, err
	}
	// Reading is bound by system calls, not CPU: a few readers in parallel
	// cut the wall time of a scan on a cold or slow disk.
	datas := make([][]byte, len(rels))
	sizes := make([]int64, len(rels)) // a file the size rule refuses, unread
	errs := make([]error, len(rels))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < scanReaders; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(rels) {
					return
				}
				datas[i], sizes[i], errs[i] = scanRead(tree, rels[i])
			}
		}()
	}
	wg.Wait()
	g.wmu.Lock()
	defer g.wmu.Unlock()
	g.mu.Lock()
	for i, rel := range rels {
		if errs[i] != nil {
			g.files[rel] = &entry{probs: []Problem{{Path: rel, Msg: "cannot read file: " + errs[i].Error()}}}
			g.countDirs(rel, 1)
			g.bad[rel] = true
			continue
		}
		if p, tooBig := SizeProblem(rel, sizes[i]); tooBig {
			g.tooLargeLocked(rel, p)
			continue
		}
		g.putLocked(rel, datas[i], false)
		datas[i] = nil
	}
	// Build the sorted structures once instead of inserting one by one.
	for s := range g.ranked {
		slices.SortFunc(g.ranked[s], func(a, b *item) int { return compareRank(a.m, b.m) })
	}
	sort.Strings(g.external)
	sort.Strings(g.system)
	sort.Strings(g.skills)
	g.uses.written = time.Now() // uses are saved in batches from now on
	g.mu.Unlock()
	return g, nil
}

// scanRead reads one file Scan listed (readMemoryFile): its content, or
// the size of a file the size rule refuses, which is not read.
func scanRead(tree *subtree.Tree, rel string) ([]byte, int64, error) {
	data, tooLarge, isDir, notRegular, err := readMemoryFile(tree, rel)
	if err == nil && (isDir || notRegular) {
		err = &fs.PathError{Op: "read", Path: rel, Err: subtree.ErrNotRegular}
	}
	return data, tooLarge, err
}

// MemoryFiles lists the memory files under root (regular files for which
// IsMemoryPath holds), sorted, without descending into hidden folders or
// transcripts/. No symbolic link is followed.
func MemoryFiles(root string) ([]string, error) {
	tree, err := subtree.Open(root)
	if err != nil {
		return nil, err
	}
	defer tree.Close()
	return memoryFiles(tree)
}

func memoryFiles(tree *subtree.Tree) ([]string, error) {
	var rels []string
	err := tree.WalkDir(".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			if rel == "." {
				return err
			}
			return nil // an unreadable subfolder is skipped, not fatal
		}
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || rel == TranscriptsDir {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && IsMemoryPath(rel) {
			rels = append(rels, rel)
		}
		return nil
	})
	return rels, err
}

// Root returns the repository directory (absolute).
func (g *Graph) Root() string { return g.root }

// Update re-reads one path from disk: a file is parsed (or forgotten when it
// no longer exists), a directory is walked (after a directory rename or
// a git checkout). Paths that are not memories are ignored.
func (g *Graph) Update(rel string) error {
	if !isCleanRel(rel) {
		return nil
	}
	if !IsMemoryPath(rel) {
		// Not a memory file, but perhaps a folder of them (after a folder
		// rename or a checkout), or a folder that is gone.
		st, err := g.tree.Lstat(rel)
		switch {
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, subtree.ErrUnsafePath):
			g.Remove(rel)
		case err == nil && st.IsDir():
			return g.updateDir(rel)
		}
		return nil
	}
	data, tooLarge, isDir, notRegular, err := readMemoryFile(g.tree, rel)
	switch {
	case errors.Is(err, fs.ErrNotExist), notRegular:
		g.Remove(rel)
		return nil
	case err != nil:
		return err
	case isDir:
		return g.updateDir(rel)
	case tooLarge > 0:
		g.PutTooLarge(rel, tooLarge)
		return nil
	}
	g.Put(rel, data)
	return nil
}

// updateDir re-reads every memory under a directory and forgets the ones
// that are gone. Its cost grows with the directory, not the repository
// (apart from one pass over the path map when files vanished from it).
func (g *Graph) updateDir(rel string) error {
	if strings.HasPrefix(rel, ".") || rel == TranscriptsDir {
		return nil
	}
	prefix := rel + "/"
	present := map[string]bool{}
	err := g.tree.WalkDir(rel, func(r string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if r != rel && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && IsMemoryPath(r) {
			present[r] = true
			data, tooLarge, err := scanRead(g.tree, r)
			switch {
			case err != nil:
			case tooLarge > 0:
				g.PutTooLarge(r, tooLarge)
			default:
				g.Put(r, data)
			}
		}
		return nil
	})
	g.mu.RLock()
	var gone []string
	if g.dirs[rel] > len(present) {
		for r := range g.files {
			if strings.HasPrefix(r, prefix) && !present[r] {
				gone = append(gone, r)
			}
		}
	}
	g.mu.RUnlock()
	for _, r := range gone {
		g.Remove(r)
	}
	return err
}

// Put updates one file from bytes already in hand (what the mount just
// wrote). Invalid content is recorded in Problems and the last valid
// version keeps serving. Paths that are not memories are ignored.
func (g *Graph) Put(rel string, data []byte) {
	if !IsMemoryPath(rel) {
		return
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()
	g.mu.Lock()
	m, changed := g.putLocked(rel, data, true)
	g.mu.Unlock()
	if !changed {
		return
	}
	if m != nil {
		g.recallPut(m)
	}
	g.notify([]string{rel})
}

// PutTooLarge records that the memory at rel is size bytes, more than the
// size rule allows (SizeProblem), without its content, which the caller
// never read: as for invalid content given to Put, the problem is reported
// and the last valid version keeps serving. A size the rule allows, or a
// path that is not a memory, is ignored.
func (g *Graph) PutTooLarge(rel string, size int64) {
	p, tooBig := SizeProblem(rel, size)
	if !tooBig || !IsMemoryPath(rel) {
		return
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()
	g.mu.Lock()
	changed := g.tooLargeLocked(rel, p)
	g.mu.Unlock()
	if changed {
		g.notify([]string{rel})
	}
}

// tooLargeLocked files the size problem p of rel (PutTooLarge) and
// reports whether anything changed. Caller holds g.mu.
func (g *Graph) tooLargeLocked(rel string, p Problem) bool {
	e := g.files[rel]
	if e == nil {
		e = &entry{}
		g.files[rel] = e
		g.countDirs(rel, 1)
	} else if !e.seen && len(e.probs) == 1 && e.probs[0] == p {
		return false
	}
	e.seen = false // the next content given is parsed, whatever its hash
	e.probs = []Problem{p}
	g.bad[rel] = true
	g.bump()
	return true
}

// putLocked parses data as rel and files it. It returns the new valid
// memory (nil when data was invalid) and whether anything changed. With
// keepSorted false the ranked lists are only appended to (Scan sorts once).
func (g *Graph) putLocked(rel string, data []byte, keepSorted bool) (*Memory, bool) {
	sum := maphash.Bytes(g.seed, data)
	e := g.files[rel]
	if e == nil {
		e = &entry{}
		g.files[rel] = e
		g.countDirs(rel, 1)
	} else if e.seen && e.sum == sum {
		return nil, false
	}
	e.sum, e.seen = sum, true
	m, probs := Parse(rel, data)
	if len(probs) > 0 {
		e.probs = probs
		g.bad[rel] = true
		g.bump()
		return nil, true
	}
	e.probs = nil
	delete(g.bad, rel)
	old := e.valid
	it := &item{m: m}
	k := KindOf(rel)
	switch k {
	case KindUser, KindCharacter:
		it.line = indexLine(m)
	case KindExternal:
		it.desc = describe(m)
	}
	g.unlink(rel, old, keepSorted)
	e.valid = it
	g.link(rel, it, keepSorted)
	g.bump()
	return m, true
}

// link adds a valid item to the per-kind structures.
func (g *Graph) link(rel string, it *item, keepSorted bool) {
	switch k := KindOf(rel); k {
	case KindUser, KindCharacter:
		if !it.m.Active() {
			return
		}
		s := rankSlot(k)
		g.listSize[s] += len(it.line)
		if !keepSorted {
			g.ranked[s] = append(g.ranked[s], it)
			return
		}
		i, _ := slices.BinarySearchFunc(g.ranked[s], it, func(a, b *item) int { return compareRank(a.m, b.m) })
		g.ranked[s] = slices.Insert(g.ranked[s], i, it)
	case KindExternal:
		if it.m.Active() {
			g.listSize[2] += extSize(rel, it)
			g.external = insertSorted(g.external, rel, keepSorted)
		}
	case KindBlock:
		if strings.HasPrefix(rel, SystemDir+"/") {
			g.system = insertSorted(g.system, rel, keepSorted)
		}
	case KindSkill:
		if it.m.Active() {
			g.skills = insertSorted(g.skills, rel, keepSorted)
		}
	}
}

// unlink removes a previously valid item from the per-kind structures.
func (g *Graph) unlink(rel string, it *item, keepSorted bool) {
	if it == nil {
		return
	}
	switch k := KindOf(rel); k {
	case KindUser, KindCharacter:
		if !it.m.Active() {
			return
		}
		s := rankSlot(k)
		g.listSize[s] -= len(it.line)
		list := g.ranked[s]
		i, found := slices.BinarySearchFunc(list, it, func(a, b *item) int { return compareRank(a.m, b.m) })
		if !found || i >= len(list) || list[i] != it {
			i = slices.Index(list, it) // only if the order was disturbed; never expected
		}
		if i >= 0 {
			g.ranked[s] = slices.Delete(list, i, i+1)
		}
	case KindExternal:
		if it.m.Active() {
			g.listSize[2] -= extSize(rel, it)
			g.external = deleteSorted(g.external, rel)
		}
	case KindBlock:
		g.system = deleteSorted(g.system, rel)
	case KindSkill:
		g.skills = deleteSorted(g.skills, rel)
	}
}

func insertSorted(list []string, s string, keepSorted bool) []string {
	if !keepSorted {
		return append(list, s)
	}
	i, found := slices.BinarySearch(list, s)
	if found {
		return list
	}
	return slices.Insert(list, i, s)
}

func deleteSorted(list []string, s string) []string {
	if i, found := slices.BinarySearch(list, s); found {
		return slices.Delete(list, i, i+1)
	}
	return list
}

// bump records a change. The caches check the version, so bumping is all
// it takes to invalidate them.
func (g *Graph) bump() { g.version++ }

// Remove forgets a file, or every memory under a directory.
func (g *Graph) Remove(rel string) {
	g.wmu.Lock()
	defer g.wmu.Unlock()
	g.mu.Lock()
	var removed []string
	if _, ok := g.files[rel]; ok {
		g.removeLocked(rel)
		removed = append(removed, rel)
	} else if g.dirs[rel] > 0 {
		prefix := rel + "/"
		for r := range g.files {
			if strings.HasPrefix(r, prefix) {
				removed = append(removed, r)
			}
		}
		sort.Strings(removed)
		for _, r := range removed {
			g.removeLocked(r)
		}
	}
	g.mu.Unlock()
	if len(removed) == 0 {
		return
	}
	for _, r := range removed {
		g.recallDelete(r)
	}
	g.notify(removed)
}

func (g *Graph) removeLocked(rel string) {
	e := g.files[rel]
	if e == nil {
		return
	}
	g.unlink(rel, e.valid, true)
	delete(g.files, rel)
	g.countDirs(rel, -1)
	delete(g.bad, rel)
	g.bump()
}

// countDirs adds d to the file count of every folder above rel.
func (g *Graph) countDirs(rel string, d int) {
	for i := strings.LastIndexByte(rel, '/'); i > 0; i = strings.LastIndexByte(rel[:i], '/') {
		dir := rel[:i]
		if g.dirs[dir] += d; g.dirs[dir] <= 0 {
			delete(g.dirs, dir)
		}
	}
}

// Rename moves a file (or a directory of memories) from oldRel to newRel.
// The new content is read from disk, since the rename already happened
// there; when it cannot be read the last valid version moves as is.
func (g *Graph) Rename(oldRel, newRel string) {
	g.mu.RLock()
	_, isFile := g.files[oldRel]
	g.mu.RUnlock()
	if !isFile {
		st, err := g.tree.Lstat(newRel)
		if err == nil && st.IsDir() {
			g.Remove(oldRel)
			_ = g.updateDir(newRel)
			return
		}
	}
	var fallback []byte
	g.mu.RLock()
	if e := g.files[oldRel]; e != nil && e.valid != nil {
		fallback = e.valid.m.Render()
	}
	g.mu.RUnlock()
	g.Remove(oldRel)
	if err := g.Update(newRel); err != nil && fallback != nil {
		g.Put(newRel, fallback)
	}
}

// Get returns a copy of the last valid version of rel, nil if none.
func (g *Graph) Get(rel string) *Memory {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if e := g.files[rel]; e != nil && e.valid != nil {
		return e.valid.m.Clone()
	}
	return nil
}

// Memories returns copies of every valid memory of kind, any status,
// sorted by path.
func (g *Graph) Memories(kind Kind) []*Memory {
	g.mu.RLock()
	defer g.mu.RUnlock()
	var out []*Memory
	for rel, e := range g.files {
		if e.valid != nil && KindOf(rel) == kind {
			out = append(out, e.valid.m.Clone())
		}
	}
	slices.SortFunc(out, func(a, b *Memory) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Paths returns every memory path the graph knows (valid or not), sorted.
func (g *Graph) Paths() []string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return slices.Sorted(maps.Keys(g.files))
}

// Problems returns the current problems of invalid files, sorted by path
// and line.
func (g *Graph) Problems() []Problem {
	g.mu.RLock()
	var out []Problem
	for rel := range g.bad {
		out = append(out, g.files[rel].probs...)
	}
	g.mu.RUnlock()
	_, sp := g.Settings() // a bad settings file is reported like a bad memory
	out = append(out, sp...)
	slices.SortStableFunc(out, func(a, b Problem) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return a.Line - b.Line
	})
	return out
}

// ReadOnly reports whether the last valid version has read_only: true.
func (g *Graph) ReadOnly(rel string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	e := g.files[rel]
	return e != nil && e.valid != nil && e.valid.m.Front.ReadOnly
}

// Index returns the rendered index of kind (KindUser or KindCharacter;
// nil for other kinds) within the repository's index budget
// (IndexTokens): the top of the ranking, then a footer saying how many
// memories are not shown and how to reach them. The bytes are shared: do
// not modify them.
func (g *Graph) Index(kind Kind) []byte {
	return g.IndexWithin(kind, g.IndexTokens()*BytesPerToken)
}

// FullIndex returns the index of kind with every active memory (the mount
// shows it as .mindmount/index/<index file>).
func (g *Graph) FullIndex(kind Kind) []byte { return g.IndexWithin(kind, 0) }

// IndexWithin returns the index of kind within maxBytes (0: no limit),
// with a section per attached team (scope_render.go).
func (g *Graph) IndexWithin(kind Kind, maxBytes int) []byte {
	if kind != KindUser && kind != KindCharacter {
		return nil
	}
	if sc := g.Scopes(); len(sc) > 0 {
		return g.scopedIndex(kind, maxBytes, sc)
	}
	return g.ownIndexWithin(kind, maxBytes)
}

// ownIndexWithin is IndexWithin of this repository alone.
func (g *Graph) ownIndexWithin(kind Kind, maxBytes int) []byte {
	key := idxKey{rankSlot(kind), maxBytes}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if b, ok := cacheGet(g, g.idxCache, key); ok {
		return b
	}
	items := g.ranked[key.slot]
	i := 0
	b := renderIndexWithin(kind, len(items), g.listSize[key.slot], maxBytes, func() []byte {
		if i >= len(items) {
			return nil
		}
		i++
		return items[i-1].line
	})
	cachePut(g, g.idxCache, key, b)
	return b
}

// Version returns a number that changes on every change of the graph.
func (g *Graph) Version() uint64 {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.version
}

// Subscribe registers fn to be called after each change with the changed
// paths. Callbacks run synchronously, in order, on the goroutine that made
// the change, after the graph's locks are released for readers: fn may read
// the graph (Index, Context, Get) but must not change it (Put, Update,
// Remove, Rename would deadlock) — hand such work to another goroutine.
func (g *Graph) Subscribe(fn func(changed []string)) {
	g.mu.Lock()
	g.subs = append(g.subs, fn)
	g.mu.Unlock()
}

func (g *Graph) notify(changed []string) {
	g.mu.RLock()
	subs := g.subs
	g.mu.RUnlock()
	for _, fn := range subs {
		fn(changed)
	}
}
