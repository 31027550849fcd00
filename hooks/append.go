package hooks

import "strings"

// pickOrAppend is pick for a frontmatter key or a section, with one more
// clean case: both sides only added whole lines, each keeping every line
// the base held, in order (two members each adding lines to the same
// memory, "echo >>" from two mounts, and again after a merge interleaved
// them). Where both added lines at the same place, ours come first, then
// theirs that ours did not add too. Both updates land instead of one
// becoming a retired sibling; anything else both sides changed is still a
// conflict.
func pickOrAppend(b, o, t string) (string, bool) {
	if v, ok := pick(b, o, t); ok {
		return v, true
	}
	bl, okB := wholeLines(b)
	ol, okO := wholeLines(o)
	tl, okT := wholeLines(t)
	if !okB || !okO || !okT || len(bl) == 0 {
		return "", false
	}
	og, okO := insertions(bl, ol)
	tg, okT := insertions(bl, tl)
	if !okO || !okT {
		return "", false
	}
	var out strings.Builder
	for i := range len(bl) + 1 {
		seen := map[string]bool{}
		for _, l := range og[i] {
			seen[l] = true
			out.WriteString(l + "\n")
		}
		for _, l := range tg[i] {
			if !seen[l] {
				out.WriteString(l + "\n")
			}
		}
		if i < len(bl) {
			out.WriteString(bl[i] + "\n")
		}
	}
	return out.String(), true
}

// wholeLines splits s into its lines; ok is false unless s is empty or
// ends with a line end (a part cut mid-line is not merged line by line).
func wholeLines(s string) ([]string, bool) {
	if s == "" {
		return nil, true
	}
	if !strings.HasSuffix(s, "\n") {
		return nil, false
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n"), true
}

// insertions finds base's lines in side, in order, each at its first
// place after the previous one, and returns the lines side holds before
// each base line (gaps[i], i < len(base)) and after the last (gaps[len]).
// ok is false when side lost a base line, or added only blank lines.
func insertions(base, side []string) (gaps [][]string, ok bool) {
	gaps = make([][]string, len(base)+1)
	j, added := 0, false
	for i, want := range base {
		for j < len(side) && side[j] != want {
			gaps[i] = append(gaps[i], side[j])
			added = added || strings.TrimSpace(side[j]) != ""
			j++
		}
		if j == len(side) {
			return nil, false // base line i is gone from side
		}
		j++
	}
	for ; j < len(side); j++ {
		gaps[len(base)] = append(gaps[len(base)], side[j])
		added = added || strings.TrimSpace(side[j]) != ""
	}
	return gaps, added
}
