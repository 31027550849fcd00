package tracker

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mindmount/mindmount/memgraph"
)

// Change kinds as they appear in a commit message body, in the order the
// body lists them (added, updated, renamed, removed).
const (
	opAdd    = 'A'
	opModify = 'M'
	opRename = 'R'
	opDelete = 'D'
)

// entry is one committed path of a burst.
type entry struct {
	op     byte
	path   string // new path
	from   string // old path, for renames
	writer string // identity, e.g. "agent", "editor"
}

func (e entry) line() string {
	if e.op == opRename {
		return fmt.Sprintf("R %s -> %s", quote(e.from), quote(e.path))
	}
	return fmt.Sprintf("%c %s", e.op, quote(e.path))
}

// quote keeps a path or a trailer value on its line of a commit message:
// one with a newline or another control character is written Go-quoted.
func quote(p string) string {
	if strings.IndexFunc(p, memgraph.IsControl) >= 0 {
		return strconv.Quote(p)
	}
	return p
}

var verbs = map[byte]string{opAdd: "add", opModify: "update", opRename: "rename", opDelete: "remove"}

// message builds the commit message of a burst and picks its author: the
// writer with the most changes, the earliest one on a tie. The subject names
// the single change ("agent: update user_memory/likes-tea.md") or counts them
// ("agent, editor: 3 changes"); the body lists every change, one per line,
// so "git log" reads as a changelog of the memory.
func message(entries []entry) (msg, author string) {
	if len(entries) == 0 {
		return "", ""
	}
	count := map[string]int{}
	var writers []string
	for _, e := range entries {
		if count[e.writer] == 0 {
			writers = append(writers, e.writer)
		}
		count[e.writer]++
	}
	author = writers[0]
	for _, w := range writers[1:] {
		if count[w] > count[author] {
			author = w
		}
	}
	// The author first, then the others in order of appearance.
	names := []string{author}
	for _, w := range writers {
		if w != author {
			names = append(names, w)
		}
	}
	who := strings.Join(names, ", ")

	sorted := append([]entry(nil), entries...)
	rank := map[byte]int{opAdd: 0, opModify: 1, opRename: 2, opDelete: 3}
	sort.SliceStable(sorted, func(i, j int) bool {
		if rank[sorted[i].op] != rank[sorted[j].op] {
			return rank[sorted[i].op] < rank[sorted[j].op]
		}
		return sorted[i].path < sorted[j].path
	})

	var b strings.Builder
	if len(sorted) == 1 {
		e := sorted[0]
		if e.op == opRename {
			fmt.Fprintf(&b, "%s: rename %s -> %s", who, quote(e.from), quote(e.path))
		} else {
			fmt.Fprintf(&b, "%s: %s %s", who, verbs[e.op], quote(e.path))
		}
	} else {
		fmt.Fprintf(&b, "%s: %d changes", who, len(sorted))
	}
	b.WriteString("\n\n")
	for _, e := range sorted {
		b.WriteString(e.line())
		if len(names) > 1 {
			fmt.Fprintf(&b, " (%s)", e.writer)
		}
		b.WriteByte('\n')
	}
	return b.String(), author
}

// recoveryMessage is the message of the start-up recovery commit: the
// subject, then every change one per line in the order examined.
func recoveryMessage(subject string, entries []entry) string {
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	for _, e := range entries {
		b.WriteString(e.line() + "\n")
	}
	return b.String()
}
