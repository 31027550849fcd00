package webui

import (
	"context"
	"html/template"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/mindmount/mindmount/memgraph"
)

// The list pages (/, /graph) derive everything they show from the memory
// graph: ranking ten thousand memories, copying them out of the graph and
// drawing the picture cost tens of milliseconds, and a page asks again on
// every load and on every live update. What they derive is kept per graph
// version (memgraph.Graph.Version changes on every change of the graph:
// a commit, a reload after a git command, an invalid file seen), so the
// first page after a change does the work once and the next ones only
// render. The version is the invalidation: a listener on the tracker
// would need registering per runtime (serve loads and unloads users) and
// could miss a change the graph saw another way; the version cannot.

// graphView is what the list pages show of one version of a graph.
type graphView struct {
	version uint64

	once     sync.Once
	blocks   []memRow
	kinds    [2]kindRows // user, character memories (kindOrder)
	external []memRow    // every external memory, retired ones included

	svgMu sync.Mutex
	svg   map[string]drawnGraph // by the pages' base path (its links)
}

// kindRows are the memories of one ranked kind.
type kindRows struct {
	ranked  []memRow // active ones in index order, Rank set
	retired []memRow // by path
}

// drawnGraph is graphSVG's result.
type drawnGraph struct {
	svg          template.HTML
	drawn, total int
}

// viewCache holds a graphView per graph. Graphs are held weakly: a
// user that serve unloads takes its graph, and the entry goes with it.
type viewCache struct {
	mu sync.Mutex
	m  map[weak.Pointer[memgraph.Graph]]*graphView
}

// get returns the view of g's current version; its parts are made on
// first use (rows for /, the picture for /graph). The version is read
// before the graph, so a view is never older than its label (at worst a
// change that lands meanwhile is made twice).
func (c *viewCache) get(g *memgraph.Graph) *graphView {
	ver := g.Version()
	k := weak.Make(g)
	c.mu.Lock()
	v := c.m[k]
	if v == nil || v.version != ver {
		if c.m == nil {
			c.m = map[weak.Pointer[memgraph.Graph]]*graphView{}
		}
		for old := range c.m {
			if old.Value() == nil {
				delete(c.m, old)
			}
		}
		v = &graphView{version: ver}
		c.m[k] = v
	}
	c.mu.Unlock()
	return v
}

// lists returns the rows of the memory list, made on first use.
func (v *graphView) lists(g *memgraph.Graph) *graphView {
	v.once.Do(func() { v.build(g) })
	return v
}

func (v *graphView) build(g *memgraph.Graph) {
	for _, m := range g.Memories(memgraph.KindBlock) {
		v.blocks = append(v.blocks, rowOf(m, 0))
	}
	slices.SortStableFunc(v.blocks, func(a, b memRow) int { return blockOrder(a.Path) - blockOrder(b.Path) })
	// One pass over both kinds: their merged rank order keeps each
	// kind's own order, so a memory's rank in its index is its place
	// among those of its kind.
	g.EachRanked(func(m *memgraph.Memory, rank int) {
		kr := &v.kinds[kindOrder(m.Path)]
		if rank > 0 {
			kr.ranked = append(kr.ranked, rowOf(m, len(kr.ranked)+1))
		} else {
			kr.retired = append(kr.retired, rowOf(m, 0))
		}
	}, memgraph.KindUser, memgraph.KindCharacter)
	for i := range v.kinds {
		slices.SortFunc(v.kinds[i].retired, func(a, b memRow) int { return strings.Compare(a.Path, b.Path) })
	}
	for _, m := range g.Memories(memgraph.KindExternal) {
		v.external = append(v.external, rowOf(m, 0))
	}
}

// graph returns the picture of this version with links below base.
func (v *graphView) graph(g *memgraph.Graph, base string) drawnGraph {
	v.svgMu.Lock()
	defer v.svgMu.Unlock()
	if d, ok := v.svg[base]; ok {
		return d
	}
	var d drawnGraph
	d.svg, d.drawn, d.total = graphSVG(g, base)
	if v.svg == nil {
		v.svg = map[string]drawnGraph{}
	}
	v.svg[base] = d
	return d
}

// commitList is every commit of one HEAD in git log's order, with the
// author each was made by: the timeline pages through it without git
// walking the history again for every page (git log --skip=9000 walks
// 9,000 commits to show 100).
type commitList struct {
	head    string
	commits []listed
}

type listed struct {
	hash, parent string // parent: the only one, "" for a root or a merge
	ident        string // "Name <email>", what git log --author matches
}

// logCache holds the commit list of each repository directory (one per
// directory: a list is only good for one HEAD).
type logCache struct {
	mu    sync.Mutex
	lists map[string]*commitList
}

// maxLogLists bounds the directories whose lists are kept (serve's users).
const maxLogLists = 16

// list returns the commit list of dir at head, extending the last one when
// HEAD only moved forward by single-parent commits and reading the whole
// history otherwise.
func (c *logCache) list(ctx context.Context, dir, head string) (*commitList, error) {
	c.mu.Lock()
	old := c.lists[dir]
	c.mu.Unlock()
	if old != nil && old.head == head {
		return old, nil
	}
	l, err := buildList(ctx, dir, head, old)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.lists == nil {
		c.lists = map[string]*commitList{}
	}
	if _, ok := c.lists[dir]; !ok && len(c.lists) >= maxLogLists {
		for k := range c.lists { // any one: a dropped list is rebuilt when asked for
			delete(c.lists, k)
			break
		}
	}
	c.lists[dir] = l
	c.mu.Unlock()
	return l, nil
}

// listFormat is one commit of a commit list: hash, parents, author ident
// (git forbids NUL in all three; -z ends each commit with a NUL).
const listFormat = "--format=%H%x00%P%x00%an <%ae>"

// readListed reads the commits git log finds for revs, in its order.
func readListed(ctx context.Context, dir string, revs ...string) ([]listed, error) {
	out, err := git(ctx, dir, append(append([]string{"log", "-z", listFormat}, revs...), "--")...)
	if err != nil {
		return nil, err
	}
	f := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(f) < 3 {
		return nil, nil
	}
	ls := make([]listed, 0, len(f)/3)
	for i := 0; i+2 < len(f); i += 3 {
		l := listed{hash: f[i], ident: f[i+2]}
		if ps := strings.Fields(f[i+1]); len(ps) == 1 {
			l.parent = ps[0]
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// buildList makes head's commit list. When head is old's HEAD plus a
// chain of single-parent commits, git log of head is that chain followed
// by git log of old's HEAD exactly (its walk holds one commit at a time
// until it reaches the old HEAD), so only the chain is read. Anything
// else — a merge (a dream's, a sync's), a HEAD moved back or elsewhere —
// reads the whole history again.
func buildList(ctx context.Context, dir, head string, old *commitList) (*commitList, error) {
	if old != nil && old.head != "" {
		news, err := readListed(ctx, dir, head, "^"+old.head)
		if err == nil && linearOnto(news, old.head) {
			return &commitList{head: head, commits: append(news, old.commits...)}, nil
		}
	}
	all, err := readListed(ctx, dir, head)
	if err != nil {
		return nil, err
	}
	return &commitList{head: head, commits: all}, nil
}

// linearOnto reports whether news, newest first, is a chain of
// single-parent commits ending on base.
func linearOnto(news []listed, base string) bool {
	if len(news) == 0 {
		return false
	}
	for i, l := range news {
		next := base
		if i+1 < len(news) {
			next = news[i+1].hash
		}
		if l.parent != next {
			return false
		}
	}
	return true
}

// page returns the hashes of the commits authored by author (a substring
// of "Name <email>", as git log --fixed-strings --author matches; "" for
// all) from the skip-th on, at most n, and whether more follow.
func (l *commitList) page(author string, skip, n int) (hashes []string, more bool) {
	seen := 0
	for _, c := range l.commits {
		if author != "" && !strings.Contains(c.ident, author) {
			continue
		}
		if seen >= skip {
			if len(hashes) == n {
				return hashes, true
			}
			hashes = append(hashes, c.hash)
		}
		seen++
	}
	return hashes, false
}
