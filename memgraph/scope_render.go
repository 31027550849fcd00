package memgraph

import (
	"strconv"
	"strings"
)

// How attached teams appear in the indexes and CONTEXT.md. The personal
// part is rendered first, exactly as without teams, within the share of
// the budget it gets; each team follows in a section of its own whose
// every line names its scope (shared/eng/user_memory/x.md). The personal
// part keeps what it needs up to half the budget, and more when the teams
// need less than the other half (personalShare); the teams split the rest
// by water filling (shareBudget): a team that needs less than an equal
// share keeps what it needs, the others split what is left equally. The
// total never exceeds the budget when the personal part alone would not.

// personalShare is the personal part's budget: what it needs up to half
// of max, plus whatever the teams do not need of the rest.
func personalShare(max, need, teamsNeed int) int {
	keep := min(need, max/2)
	return max - min(teamsNeed, max-keep)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// scopedLine turns an index line "- path — …" into "- shared/<team>/path — …".
func scopedLine(team string, line []byte) []byte {
	if len(line) < 2 {
		return line
	}
	out := make([]byte, 0, len(line)+len(SharedPrefix(team)))
	out = append(out, line[:2]...)
	out = append(out, SharedPrefix(team)...)
	return append(out, line[2:]...)
}

// renderSection renders a heading and one-line entries within alloc bytes
// (negative: no limit). When not every entry fits, the section ends with
// more(missing), entries given back until it fits; nil when not even the
// heading and that line fit.
func renderSection(head string, count int, next func() []byte, alloc int, more func(missing int) string) []byte {
	if alloc >= 0 && len(head) > alloc {
		return nil
	}
	b := []byte(head)
	var ends []int
	for l := next(); l != nil; l = next() {
		if alloc >= 0 && len(b)+len(l) > alloc {
			break
		}
		b = append(b, l...)
		ends = append(ends, len(b))
	}
	for {
		if len(ends) == count {
			return b
		}
		note := more(count - len(ends))
		if len(b)+len(note) <= alloc {
			return append(b, note...)
		}
		if len(ends) == 0 {
			return nil
		}
		ends = ends[:len(ends)-1]
		if len(ends) > 0 {
			b = b[:ends[len(ends)-1]]
		} else {
			b = b[:len(head)]
		}
	}
}

// teamList is one team's entries for a section: its ranked memories of
// the given slots, then (for the context) its external files, each line
// labelled with the team's scope. The caller holds t.mu for reading.
func teamList(name string, t *Graph, slots []int, external bool) (count, need int, next func() []byte) {
	prefix := len(SharedPrefix(name))
	for _, s := range slots {
		count += len(t.ranked[s])
		need += t.listSize[s] + prefix*len(t.ranked[s])
	}
	if external {
		count += len(t.external)
		need += t.listSize[2] + prefix*len(t.external)
	}
	si, i, ei := 0, 0, 0
	next = func() []byte {
		for si < len(slots) {
			items := t.ranked[slots[si]]
			if i < len(items) {
				i++
				return scopedLine(name, items[i-1].line)
			}
			si, i = si+1, 0
		}
		if external && ei < len(t.external) {
			rel := t.external[ei]
			ei++
			return []byte("- " + SharedPrefix(name) + SafeLine(rel) + " — " + t.files[rel].valid.desc + "\n")
		}
		return nil
	}
	return count, need, next
}

// moreLine says how many entries of a team a cut section leaves out and
// how to reach them.
func moreLine(team string) func(int) string {
	return func(n int) string {
		return "- … " + strconv.Itoa(n) + " more of team " + team + " not shown; the files: ls " + SharedPrefix(team) +
			"; search: cat \".mindmount/search/@" + team + " <words>\"\n"
	}
}

// scopedIndex is IndexWithin with a section per attached team.
func (g *Graph) scopedIndex(kind Kind, maxBytes int, scopes []Scope) []byte {
	slot := rankSlot(kind)
	heads := make([]string, len(scopes))
	needs := make([]int, len(scopes)+1)
	needs[0] = len(g.ownIndexWithin(kind, 0))
	for i, s := range scopes {
		heads[i] = "\n## Team memory: " + s.Name + "\n\nShared with team " + s.Name + ", most used first; the files are under " + SharedPrefix(s.Name) + ".\n\n"
		s.Graph.mu.RLock()
		_, need, _ := teamList(s.Name, s.Graph, []int{slot}, false)
		s.Graph.mu.RUnlock()
		needs[i+1] = len(heads[i]) + need
	}
	limit := -1
	var alloc []int
	own := g.ownIndexWithin(kind, 0)
	if maxBytes > 0 {
		if share := personalShare(maxBytes, needs[0], sum(needs[1:])); share < needs[0] {
			own = g.ownIndexWithin(kind, share)
		}
		alloc = shareBudget(maxBytes-len(own), needs[1:])
	}
	out := append([]byte(nil), own...)
	for i, s := range scopes {
		if alloc != nil {
			limit = alloc[i]
		}
		s.Graph.mu.RLock()
		count, _, next := teamList(s.Name, s.Graph, []int{slot}, false)
		if count > 0 {
			out = append(out, renderSection(heads[i], count, next, limit, moreLine(s.Name))...)
		}
		s.Graph.mu.RUnlock()
	}
	return out
}

// teamBlocks is what of a team is always in its members' context: its
// pinned memories with their facts and its system/ blocks, labelled.
func teamBlocks(name string, t *Graph) string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var b strings.Builder
	for _, s := range []int{rankSlot(KindCharacter), rankSlot(KindUser)} {
		for _, it := range t.ranked[s] {
			if !it.m.Front.Pinned {
				break
			}
			fact := SafeLine(it.m.Fact)
			if fact == "" {
				fact = describe(it.m)
			}
			b.WriteString("- " + SharedPrefix(name) + SafeLine(it.m.Path) + " — " + fact + "\n")
		}
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	for _, rel := range t.system {
		if txt := t.blockText(rel); txt != "" {
			b.WriteString("<!-- " + SharedPrefix(name) + SafeLine(rel) + " -->" + txt + "\n")
		}
	}
	return b.String()
}

// cutLines keeps the whole lines of text that fit in max bytes, and says
// how many it left out.
func cutLines(text string, max int, what string) string {
	if len(text) <= max {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	i := 0
	for ; i < len(lines); i++ {
		note := "<!-- mindmount: " + strconv.Itoa(len(lines)-i) + " lines of " + what + " not shown -->\n"
		if b.Len()+len(lines[i])+len(note) > max {
			break
		}
		b.WriteString(lines[i])
	}
	note := "<!-- mindmount: " + strconv.Itoa(len(lines)-i) + " lines of " + what + " not shown -->\n"
	if b.Len()+len(note) <= max {
		b.WriteString(note)
	}
	return b.String()
}

// scopedContext is Context with a section per attached team: its heading,
// its pinned memories and system/ blocks (always in a member's context,
// together at most half the budget), then its memories, most used first.
func (g *Graph) scopedContext(budget int, scopes []Scope) []byte {
	blocks := make([]string, len(scopes))
	blockNeeds := make([]int, len(scopes))
	for i, s := range scopes {
		blocks[i] = "\n## Team memory: " + s.Name + "\n\nShared with team " + s.Name + "; its files are under " + SharedPrefix(s.Name) + ".\n\n" + teamBlocks(s.Name, s.Graph)
		blockNeeds[i] = len(blocks[i])
	}
	listHead := "Memories of the team, most used first (file — description (uses)):\n\n"
	slots := []int{rankSlot(KindCharacter), rankSlot(KindUser)}
	listNeeds := make([]int, len(scopes))
	for i, s := range scopes {
		s.Graph.mu.RLock()
		_, need, _ := teamList(s.Name, s.Graph, slots, true)
		s.Graph.mu.RUnlock()
		listNeeds[i] = len(listHead) + need
	}
	own := g.ownContext(budget)
	// The personal context needs its own length plus the room it keeps
	// for a truncation marker to come out uncut.
	if share := personalShare(budget, len(own)+markerReserve, sum(blockNeeds)+sum(listNeeds)); share < len(own)+markerReserve {
		own = g.ownContext(share)
	}
	// The teams' blocks take up to half of what is left, more when their
	// lists need less; the lists share the rest.
	room := budget - len(own)
	fixed := 0
	for i, a := range shareBudget(max(room/2, room-sum(listNeeds)), blockNeeds) {
		blocks[i] = cutLines(blocks[i], a, "team "+scopes[i].Name+"'s blocks")
		fixed += len(blocks[i])
	}
	alloc := shareBudget(room-fixed, listNeeds)
	out := append([]byte(nil), own...)
	for i, s := range scopes {
		out = append(out, blocks[i]...)
		s.Graph.mu.RLock()
		count, _, next := teamList(s.Name, s.Graph, slots, true)
		if count > 0 {
			out = append(out, renderSection(listHead, count, next, alloc[i], moreLine(s.Name))...)
		}
		s.Graph.mu.RUnlock()
	}
	return out
}
