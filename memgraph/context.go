package memgraph

import (
	"bytes"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultContextBytes is the CONTEXT.md budget when ContextOptions sets none.
const DefaultContextBytes = 32 << 10

// BytesPerToken is the rough size of a token of English text, for budgets
// given in tokens.
const BytesPerToken = 4

// budget returns the byte budget the options ask for.
func (o ContextOptions) budget() int {
	switch {
	case o.MaxBytes > 0:
		return o.MaxBytes
	case o.MaxTokens > 0:
		return o.MaxTokens * BytesPerToken
	}
	return DefaultContextBytes
}

// markerReserve is kept free for the closing truncation marker.
const markerReserve = 200

// Context returns the compiled context (CONTEXT.md): the pinned memories
// with their facts (first, and counted against the budget first: a safety
// fact is never cut for a longer list), character.md, the
// character index, user.md, the user index, every system/**.md block, then
// a tree of external memory with each file's description. Frontmatter of
// blocks is stripped; retired memories never appear. When the budget is
// exceeded, the always-in-context blocks win, the three lists share what
// is left, each cut list ends with a line saying how much is missing, and
// the file ends with an explicit truncation marker — never a silent cut.
// The bytes are cached per version and budget; do not modify them.
// Attached teams get their own sections within the same budget
// (scope_render.go).
func (g *Graph) Context(opt ContextOptions) []byte {
	if sc := g.Scopes(); len(sc) > 0 {
		return g.scopedContext(opt.budget(), sc)
	}
	return g.ownContext(opt.budget())
}

// ownContext is Context of this repository alone within max bytes.
func (g *Graph) ownContext(max int) []byte {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if b, ok := cacheGet(g, g.ctxCache, max); ok {
		return b
	}
	b := g.buildContext(max)
	cachePut(g, g.ctxCache, max, b)
	return b
}

// ctxList is one of the three lists of the context (character index, user
// index, external tree), produced line by line so a 10,000-entry list costs
// nothing beyond the lines that fit.
type ctxList struct {
	name  string // for the truncation marker: "user memories"
	file  string // where the full list lives, "" for external
	count int    // entries (not lines) in the list
	need  int    // approximate bytes of the whole list
	next  func() (line []byte, entry bool, ok bool)
	alloc int
}

// buildContext renders the context within max bytes. Caller holds g.mu.
func (g *Graph) buildContext(max int) []byte {
	header := "<!-- CONTEXT.md is compiled by mindmount from this memory repository; edit the source files, not this one -->\n"
	pinned := g.pinnedText()
	charBlock := g.blockText(CharacterFile)
	userBlock := g.blockText(UserFile)
	var sysBlocks, sysNames []string
	for _, rel := range g.system {
		if t := g.blockText(rel); t != "" {
			sysBlocks = append(sysBlocks, "<!-- "+SafeLine(rel)+" -->\n"+t)
			sysNames = append(sysNames, rel)
		}
	}
	skills := g.skillsText() // skill_graph.go: within its own budget
	charHead := "\n## Character memory\n\nWhat you learned about talking to this user, most used first (file — description (uses)):\n\n"
	userHead := "\n## User memory\n\nWhat you know about the user, most used first (file — description (uses)):\n\n"
	extHead := "\n## External memory\n\nOther files in this memory; read one when it is relevant:\n\n"

	lists := []*ctxList{
		g.rankedList(KindCharacter, "character memories", FullIndexPath(KindCharacter)),
		g.rankedList(KindUser, "user memories", FullIndexPath(KindUser)),
		g.externalList(),
	}
	heads := []string{charHead, userHead, extHead}

	// Fixed parts: header, blocks and the list headings.
	fixed := len(header) + len(pinned) + len(charBlock) + len(userBlock) + len(skills)
	for _, s := range sysBlocks {
		fixed += len(s) + 1
	}
	for i, l := range lists {
		if l.count > 0 {
			fixed += len(heads[i])
		}
	}
	avail := max - markerReserve
	// Share what the blocks leave among the non-empty lists.
	var live []*ctxList
	var needs []int
	for _, l := range lists {
		if l.count > 0 {
			live, needs = append(live, l), append(needs, l.need)
		}
	}
	for i, a := range shareBudget(avail-fixed, needs) {
		live[i].alloc = a
	}
	// External memory comes last: it takes whatever is left, so its byte
	// estimate never cuts it short.
	lists[2].alloc = max

	w := &ctxWriter{limit: avail}
	w.b = make([]byte, 0, min(max, fixed+lists[0].need+lists[1].need+lists[2].need+markerReserve+1024))
	w.write(header)
	w.block("pinned memories", pinned)
	w.block(CharacterFile, charBlock)
	g.writeList(w, lists[0], heads[0])
	w.block(UserFile, userBlock)
	g.writeList(w, lists[1], heads[1])
	for i, s := range sysBlocks {
		w.write("\n")
		w.block(sysNames[i], s)
	}
	w.block("skills", skills)
	g.writeList(w, lists[2], heads[2])
	w.closeWithMarker(max)
	return w.b
}

// ctxWriter appends text while it fits and records what did not.
type ctxWriter struct {
	b       []byte
	limit   int
	omitted []string
}

func (w *ctxWriter) fits(n int) bool { return len(w.b)+n <= w.limit }

// closeWithMarker ends a context that left something out with the
// truncation marker naming it, giving back whole lines until the marker
// fits within max too.
func (w *ctxWriter) closeWithMarker(max int) {
	if len(w.omitted) == 0 {
		return
	}
	omitted := strings.Join(w.omitted, ", ")
	if len(omitted) > markerReserve/2 {
		cut := strings.LastIndex(omitted[:markerReserve/2], ", ")
		for cut < 0 || !utf8.RuneStart(omitted[cut]) {
			if cut < 0 {
				cut = markerReserve / 2
			}
			cut-- // a single long item: cut it at a character boundary
		}
		omitted = omitted[:cut] + " …"
	}
	marker := func() string {
		return "\n<!-- mindmount: context truncated at " + strconv.Itoa(len(w.b)) + " bytes (budget " + strconv.Itoa(max) + "); omitted: " + omitted + " -->\n"
	}
	for len(w.b)+len(marker()) > max && len(w.b) > 0 {
		cut := bytes.LastIndexByte(w.b[:len(w.b)-1], '\n')
		w.b = w.b[:cut+1]
	}
	w.b = append(w.b, marker()...)
}

func (w *ctxWriter) write(s string) {
	if w.fits(len(s)) {
		w.b = append(w.b, s...)
	}
}

// block writes a whole block, or its first lines when it does not fit.
func (w *ctxWriter) block(name, text string) {
	if text == "" {
		return
	}
	if w.fits(len(text)) {
		w.b = append(w.b, text...)
		return
	}
	lines := strings.SplitAfter(text, "\n")
	i := 0
	for ; i < len(lines); i++ {
		if !w.fits(len(lines[i])) {
			break
		}
		w.b = append(w.b, lines[i]...)
	}
	if n := len(lines) - i; n > 0 {
		w.omitted = append(w.omitted, strconv.Itoa(n)+" lines of "+name)
	}
}

// writeList writes a list heading and as many lines as its allocation
// allows. A cut list ends with a line saying how many entries are missing
// and where to find them; lines are taken back until that line fits.
func (g *Graph) writeList(w *ctxWriter, l *ctxList, head string) {
	if l.count == 0 {
		return
	}
	if !w.fits(len(head)) {
		w.omitted = append(w.omitted, strconv.Itoa(l.count)+" "+l.name)
		return
	}
	w.b = append(w.b, head...)
	type mark struct {
		off   int
		entry bool
	}
	var marks []mark
	start, shown := len(w.b), 0
	for {
		line, isEntry, ok := l.next()
		if !ok {
			return
		}
		if len(w.b)-start+len(line) > l.alloc || !w.fits(len(line)) {
			break
		}
		marks = append(marks, mark{len(w.b), isEntry})
		w.b = append(w.b, line...)
		if isEntry {
			shown++
		}
	}
	where := "in " + l.file
	if l.file == "" {
		where = "(list the folders to see them)"
	}
	note := func() string {
		return "- … " + strconv.Itoa(l.count-shown) + " more " + l.name + " not shown " + where + "\n"
	}
	for !w.fits(len(note())) && len(marks) > 0 {
		last := marks[len(marks)-1]
		marks = marks[:len(marks)-1]
		w.b = w.b[:last.off]
		if last.entry {
			shown--
		}
	}
	if w.fits(len(note())) {
		w.b = append(w.b, note()...)
	}
	w.omitted = append(w.omitted, strconv.Itoa(l.count-shown)+" "+l.name)
}

// rankedList yields the cached index lines of a kind in rank order.
func (g *Graph) rankedList(kind Kind, name, file string) *ctxList {
	s := rankSlot(kind)
	items := g.ranked[s]
	i := 0
	return &ctxList{name: name, file: file, count: len(items), need: g.listSize[s], next: func() ([]byte, bool, bool) {
		if i >= len(items) {
			return nil, false, false
		}
		i++
		return items[i-1].line, true, true
	}}
}

// extSize estimates the bytes of an external memory's tree entry.
func extSize(rel string, it *item) int { return len(rel) + len(it.desc) + 8 }

// describe is the line shown for a file in the external memory tree.
func describe(m *Memory) string {
	if d := SafeLine(m.Front.Description); d != "" {
		return d
	}
	if d := SafeLine(m.Title); d != "" {
		return d
	}
	return "(no description)"
}

// externalList yields a tree of the active external memories: one line per
// folder, one line per file with its description. Only the lines that are
// asked for are built.
func (g *Graph) externalList() *ctxList {
	paths := g.external
	var prev []string
	var queue [][]byte
	i := 0
	return &ctxList{name: "external files", count: len(paths), need: g.listSize[2], next: func() ([]byte, bool, bool) {
		if len(queue) == 0 {
			if i >= len(paths) {
				return nil, false, false
			}
			rel := paths[i]
			i++
			dir := path.Dir(rel)
			var dirs []string
			if dir != "." {
				dirs = strings.Split(dir, "/")
			}
			common := 0
			for common < len(dirs) && common < len(prev) && dirs[common] == prev[common] {
				common++
			}
			for d := common; d < len(dirs); d++ {
				queue = append(queue, []byte(strings.Repeat("  ", d)+"- "+SafeLine(strings.Join(dirs[:d+1], "/"))+"/\n"))
			}
			prev = dirs
			queue = append(queue, []byte(strings.Repeat("  ", len(dirs))+"- "+SafeLine(rel)+" — "+g.files[rel].valid.desc+"\n"))
		}
		line := queue[0]
		queue = queue[1:]
		return line, len(queue) == 0, true
	}}
}

// pinnedText lists the active pinned memories, character ones first, with
// their facts: pinned ones lead the ranked lists, so this reads only
// them. "" when none is pinned.
func (g *Graph) pinnedText() string {
	var b strings.Builder
	for _, s := range []int{rankSlot(KindCharacter), rankSlot(KindUser)} {
		for _, it := range g.ranked[s] {
			if !it.m.Front.Pinned {
				break
			}
			fact := SafeLine(it.m.Fact)
			if fact == "" {
				fact = describe(it.m)
			}
			b.WriteString("- " + SafeLine(it.m.Path) + " — " + fact + "\n")
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n## Pinned memory\n\nAlways keep these in mind (file — fact):\n\n" + b.String()
}

// blockText returns a block's body without frontmatter, ending in a
// newline; "" when the block is missing, invalid since ever, or retired.
func (g *Graph) blockText(rel string) string {
	e := g.files[rel]
	if e == nil || e.valid == nil || !e.valid.m.Active() {
		return ""
	}
	m := e.valid.m
	var b bytes.Buffer
	for _, s := range m.raw.secs {
		b.WriteString(s.raw)
	}
	t := strings.Trim(b.String(), "\n")
	if t == "" {
		return ""
	}
	return "\n" + t + "\n"
}
