package memgraph

// EachRanked calls fn with every valid memory of kinds (KindUser,
// KindCharacter; others are ignored): first the active ones in rank order
// across those kinds — the order Rank gives the memories of all of them —
// with rank counting from 1, then the others (retired, contradicted,
// superseded) with rank 0, in no set order.
//
// It is for readers that summarise thousands of memories at once (the web
// page's lists and graph): Memories copies each memory and Rank sorts them
// again, which costs far more than the summary, while the graph keeps its
// ranked lists current anyway. The memories are the graph's own, read
// under its read lock: fn must copy what it needs, and must neither
// modify nor keep m, nor call the graph.
func (g *Graph) EachRanked(fn func(m *Memory, rank int), kinds ...Kind) {
	var want [2]bool
	for _, k := range kinds {
		if k == KindUser || k == KindCharacter {
			want[rankSlot(k)] = true
		}
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	var lists [][]*item
	for s, ok := range want {
		if ok {
			lists = append(lists, g.ranked[s])
		}
	}
	// The ranked lists are each in rank order: merging them is the rank
	// order of their union (compareRank is a total order).
	next := make([]int, len(lists))
	for rank := 1; ; rank++ {
		best := -1
		for i, l := range lists {
			if next[i] < len(l) && (best < 0 || compareRank(l[next[i]].m, lists[best][next[best]].m) < 0) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		fn(lists[best][next[best]].m, rank)
		next[best]++
	}
	for rel, e := range g.files {
		if e.valid == nil || e.valid.m.Active() {
			continue
		}
		if k := KindOf(rel); (k == KindUser || k == KindCharacter) && want[rankSlot(k)] {
			fn(e.valid.m, 0)
		}
	}
}
