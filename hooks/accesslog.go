package hooks

import (
	"sort"
	"strings"
	"time"

	"github.com/mindmount/mindmount/memgraph"
)

// accessLogName is the lower-cased heading memgraph gives the access log.
const accessLogName = "access log"

// UnionAccessLog merges two versions of an access log section (heading
// line and body, as memgraph.SplitParts cuts it): every line of either
// side, the dated ones ("used, DD.MM.YY") ordered by date and the others
// before them in the order first seen. The heading and the trailing blank
// lines are ours'. A use recorded on either machine is never lost, and the
// same line on both sides is kept once: a line appearing n times on one
// side and m on the other appears max(n, m) times (two uses on one day
// stay two).
func UnionAccessLog(ours, theirs string) string {
	head, body := cutHeading(ours)
	_, tbody := cutHeading(theirs)
	lines, trail := splitTrail(body)
	tlines, _ := splitTrail(tbody)
	type entry struct {
		text string
		when time.Time
		ok   bool
		seq  int
	}
	count := func(ls []string) map[string]int {
		m := map[string]int{}
		for _, l := range ls {
			if t := strings.TrimSpace(l); t != "" {
				m[t]++
			}
		}
		return m
	}
	oc, tc := count(lines), count(tlines)
	emitted := map[string]int{}
	var es []entry
	for _, l := range append(lines, tlines...) {
		t := strings.TrimSpace(l)
		if t == "" || emitted[t] >= max(oc[t], tc[t]) {
			continue
		}
		emitted[t]++
		e := entry{text: strings.TrimRight(l, " \t\r"), seq: len(es)}
		if when, use, ok := memgraph.UseStamp(t); use {
			e.when, e.ok = when, ok
		}
		es = append(es, e)
	}
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.ok != b.ok {
			return !a.ok // undated lines first
		}
		if a.ok && !a.when.Equal(b.when) {
			return a.when.Before(b.when)
		}
		return a.seq < b.seq
	})
	var s strings.Builder
	s.WriteString(head)
	for _, e := range es {
		s.WriteString(e.text + "\n")
	}
	s.WriteString(trail)
	return s.String()
}

// cutHeading splits a section into its heading line (with newline) and body.
func cutHeading(raw string) (head, body string) {
	if i := strings.IndexByte(raw, '\n'); i >= 0 {
		return raw[:i+1], raw[i+1:]
	}
	if raw == "" {
		return "", ""
	}
	return raw + "\n", ""
}

// splitTrail returns the body's lines (without newlines) and its trailing
// blank lines (with newlines), which separate it from the next section.
func splitTrail(body string) (lines []string, trail string) {
	trimmed := strings.TrimRight(body, " \t\r\n")
	trail = body[len(trimmed):]
	if trimmed == "" {
		return nil, trail
	}
	if i := strings.IndexByte(trail, '\n'); i >= 0 {
		trail = trail[i+1:] // the content's own line end is not trailing
	} else {
		trail = ""
	}
	return strings.Split(trimmed, "\n"), trail
}
