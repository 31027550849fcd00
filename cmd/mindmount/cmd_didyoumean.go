package main

// closestCommand is the command a mistyped name most likely meant ("mout"
// -> "mount"): the one fewest single-letter edits away, at most two and
// fewer than half the name's length; "" when none is that close. Hidden
// commands (worker, the merge drivers) are never suggested.
func closestCommand(name string) string {
	best, bestD := "", 3
	for _, c := range commandTable {
		if hiddenCommand(c.name) {
			continue
		}
		if d := editDistance(name, c.name); d < bestD && 2*d < len(name) {
			best, bestD = c.name, d
		}
	}
	return best
}

// hiddenCommand reports whether name is a command people do not type.
func hiddenCommand(name string) bool {
	switch name {
	case "worker", "merge-cursor", "merge-memory":
		return true
	}
	return false
}

// editDistance is the Levenshtein distance of a and b, counting an
// adjacent transposition ("mnout") as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
