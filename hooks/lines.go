package hooks

import (
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// mergeLines is a three-way line merge (diff3, as git merge-file does it):
// the base lines both sides kept split the files into hunks; a hunk only
// one side changed takes that side's lines, one both changed alike takes
// them once. A hunk changed differently on both sides is a conflict: ok is
// false and the hunk is written with git's markers ("<<<<<<< ours",
// "=======", ">>>>>>> theirs") around what differs, after dropping the
// lines both sides begin and end it with (git's "zealous" merge). Lines are
// compared whole, line ends included.
func mergeLines(base, ours, theirs []byte) (merged []byte, ok bool) {
	bl, ol, tl := splitLines(base), splitLines(ours), splitLines(theirs)
	var out strings.Builder
	if max(len(bl), len(ol), len(tl)) > maxMergeLines {
		// The diff costs lines × differences: a file this long (from a
		// hostile remote, say) is one conflict, not minutes of CPU.
		mergeHunk(&out, []string{"\x00"}, ol, tl) // a base line no side holds: the hunk is a conflict
		return []byte(out.String()), false
	}
	mo, mt := matchLines(bl, ol), matchLines(bl, tl)
	ok = true
	i, j, k := 0, 0, 0
	for {
		// Lines all three hold at the current positions are stable.
		for i < len(bl) && mo[i] == j && mt[i] == k {
			out.WriteString(bl[i])
			i, j, k = i+1, j+1, k+1
		}
		// The hunk runs to the next base line both sides kept.
		ni := i
		for ni < len(bl) && (mo[ni] < 0 || mt[ni] < 0) {
			ni++
		}
		nj, nk := len(ol), len(tl)
		if ni < len(bl) {
			nj, nk = mo[ni], mt[ni]
		}
		if ni == i && nj == j && nk == k {
			return []byte(out.String()), ok
		}
		if !mergeHunk(&out, bl[i:ni], ol[j:nj], tl[k:nk]) {
			ok = false
		}
		i, j, k = ni, nj, nk
	}
}

// maxMergeLines bounds the line merge: a side with more lines is a
// conflict (10,000 lines all changed take about 2.5 s to diff).
const maxMergeLines = 10000

// mergeHunk writes the merge of one hunk; false on a conflict.
func mergeHunk(out *strings.Builder, b, o, t []string) bool {
	switch {
	case slices.Equal(o, b):
		writeLines(out, t)
		return true
	case slices.Equal(t, b), slices.Equal(o, t):
		writeLines(out, o)
		return true
	}
	p := 0
	for p < len(o) && p < len(t) && o[p] == t[p] {
		p++
	}
	s := 0
	for s < len(o)-p && s < len(t)-p && o[len(o)-1-s] == t[len(t)-1-s] {
		s++
	}
	writeLines(out, o[:p])
	ro, rt := o[p:len(o)-s], t[p:len(t)-s]
	clean := len(b) == 0 && (len(ro) == 0 || len(rt) == 0)
	if clean { // both inserted here, one side's lines within the other's
		writeLines(out, ro)
		writeLines(out, rt)
	} else {
		out.WriteString("<<<<<<< ours\n")
		writeLines(out, ro)
		endLine(out)
		out.WriteString("=======\n")
		writeLines(out, rt)
		endLine(out)
		out.WriteString(">>>>>>> theirs\n")
	}
	writeLines(out, o[len(o)-s:])
	return clean
}

func writeLines(out *strings.Builder, ls []string) {
	for _, l := range ls {
		out.WriteString(l)
	}
}

// endLine ends an unfinished last line before a conflict marker.
func endLine(out *strings.Builder) {
	if s := out.String(); s != "" && !strings.HasSuffix(s, "\n") {
		out.WriteByte('\n')
	}
}

// splitLines cuts data after each "\n"; a last line without one is kept.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	ls := strings.SplitAfter(string(data), "\n")
	if ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	return ls
}

// matchLines maps each line of a to the line of b it is kept as (-1: a
// removed it), by a line diff (Myers, go-git's utils/diff). The mapping
// rises strictly and pairs only equal lines, whatever the diff says.
func matchLines(a, b []string) []int {
	m := make([]int, len(a))
	for i := range m {
		m[i] = -1
	}
	i, j := 0, 0
	for _, d := range diff.Do(strings.Join(a, ""), strings.Join(b, "")) {
		n := len(splitLines([]byte(d.Text)))
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			for range n {
				if i < len(a) && j < len(b) && a[i] == b[j] {
					m[i] = j
				}
				i, j = i+1, j+1
			}
		case diffmatchpatch.DiffDelete:
			i += n
		case diffmatchpatch.DiffInsert:
			j += n
		}
	}
	return m
}
