package webui

import (
	"bytes"
	"fmt"
	"html/template"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/mindmount/mindmount/memgraph"
)

// md renders memory bodies. goldmark's HTML renderer leaves raw HTML out
// (it writes "<!-- raw HTML omitted -->") and drops dangerous link targets
// (javascript:, vbscript:, data: other than images) unless WithUnsafe is
// given, which it never is here.
// Hard wraps keep a memory's lines (an access log's "used, …" lines) as
// written.
var md = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough),
	goldmark.WithRendererOptions(html.WithHardWraps()))

// renderMarkdown renders text to HTML that is safe to put in a page.
func renderMarkdown(text string) template.HTML {
	var b bytes.Buffer
	if err := md.Convert([]byte(text), &b); err != nil {
		return template.HTML("<pre>" + template.HTMLEscapeString(text) + "</pre>")
	}
	return template.HTML(b.String()) // #nosec: goldmark without WithUnsafe escapes text and omits raw HTML
}

// chartBar is one month of a memory's uses.
type chartBar struct {
	X, Y, W, H int
	Label      string
	N          int
}

// chart is a small bar chart of uses per month over the last year.
type chart struct {
	Bars   []chartBar
	Total  int
	Width  int
	Height int
}

// useChart counts uses per month for the 12 months up to now.
func useChart(dates []time.Time, now time.Time) chart {
	const months, barW, gap, height = 12, 18, 4, 60
	start := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, -(months - 1), 0)
	counts := make([]int, months)
	for _, d := range dates {
		i := (d.Year()-start.Year())*12 + int(d.Month()) - int(start.Month())
		if i >= 0 && i < months {
			counts[i]++
		}
	}
	top := max(slices.Max(counts), 1)
	c := chart{Total: len(dates), Width: months * (barW + gap), Height: height + 14}
	for i, n := range counts {
		h := n * height / top
		if n > 0 {
			h = max(h, 2)
		}
		m := start.AddDate(0, i, 0)
		c.Bars = append(c.Bars, chartBar{X: i * (barW + gap), Y: height - h, W: barW, H: h, N: n, Label: m.Format("Jan 06")})
	}
	return c
}

// graphSVG draws the memory graph: every user and character memory as a
// circle sized by its use count (active ones on an inner ring, retired
// ones grey on an outer ring), a line for each supersedes link and for
// memories that share a topic (chained, not all pairs, so a topic of n
// memories draws n-1 lines). Every label is escaped by fmt's %s through
// template.HTMLEscapeString.
func graphSVG(g *memgraph.Graph, base string) (svg template.HTML, drawn, total int) {
	var ms []*memgraph.Memory
	ms = append(ms, g.Memories(memgraph.KindUser)...)
	ms = append(ms, g.Memories(memgraph.KindCharacter)...)
	active := memgraph.Rank(ms)
	var retired []*memgraph.Memory
	for _, m := range ms {
		if !m.Active() {
			retired = append(retired, m)
		}
	}
	// A picture of ten thousand dots says nothing and costs a lot: the
	// most used memories and some retired ones are drawn, the rest
	// counted.
	total = len(ms)
	if len(active) > graphActive {
		active = active[:graphActive]
	}
	if len(retired) > graphRetired {
		retired = retired[len(retired)-graphRetired:]
	}
	ms = append(append([]*memgraph.Memory{}, active...), retired...)
	const size = 800.0
	cx, cy := size/2, size/2
	type node struct {
		x, y, r float64
		m       *memgraph.Memory
	}
	pos := map[string]node{}
	place := func(list []*memgraph.Memory, radius float64) {
		for i, m := range list {
			a := 2 * math.Pi * float64(i) / float64(max(len(list), 1))
			r := 4 + 3*math.Sqrt(float64(m.Uses))
			pos[m.Path] = node{cx + radius*math.Cos(a), cy + radius*math.Sin(a), min(r, 30), m}
		}
	}
	// The most used memories sit nearest the centre when there are few.
	inner := 0.30 * size
	if len(active) > 60 {
		inner = 0.38 * size
	}
	place(active, inner)
	place(retired, 0.46*size)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" class="graph" role="img" aria-label="memory graph">`, size, size)
	line := func(a, c node, class string) {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="%s"/>`, a.x, a.y, c.x, c.y, class)
	}
	byTopic := map[string][]string{}
	edges := map[[2]string]bool{}
	for _, m := range ms {
		for _, s := range []string{m.Front.Supersedes, m.Front.SupersededBy} {
			if s == "" {
				continue
			}
			if !strings.HasSuffix(s, ".md") {
				s += ".md"
			}
			pair := [2]string{min(m.Path, s), max(m.Path, s)}
			if o, ok := pos[s]; ok && !edges[pair] {
				edges[pair] = true
				line(pos[m.Path], o, "edge-supersedes")
			}
		}
		if m.Front.Topic != "" {
			byTopic[m.Front.Topic] = append(byTopic[m.Front.Topic], m.Path)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(byTopic)) {
		paths := byTopic[t]
		for i := 1; i < len(paths); i++ {
			line(pos[paths[i-1]], pos[paths[i]], "edge-topic")
		}
	}
	// Names fit beside the circles while there are few of them.
	labels := len(ms) <= 60
	for _, list := range [][]*memgraph.Memory{retired, active} {
		for _, m := range list {
			n := pos[m.Path]
			class := "node-" + string(memgraph.KindOf(m.Path))
			if !m.Active() {
				class = "node-retired"
			}
			href := base + "/m/" + pathEscape(m.Path)
			fmt.Fprintf(&b, `<a href="%s"><circle cx="%.1f" cy="%.1f" r="%.1f" class="%s"><title>%s — %s (%d uses)</title></circle></a>`,
				template.HTMLEscapeString(href), n.x, n.y, n.r, class,
				template.HTMLEscapeString(m.Path), template.HTMLEscapeString(m.Front.Description), m.Uses)
			if labels {
				fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="label">%s</text>`, n.x+n.r+3, n.y+4, template.HTMLEscapeString(m.Slug()))
			}
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), len(ms), total // every interpolated string above is escaped
}

// graphActive and graphRetired bound the memories the graph draws.
const (
	graphActive  = 1000
	graphRetired = 200
)

// pathEscape escapes each element of a repository path for a URL.
func pathEscape(p string) string {
	els := strings.Split(p, "/")
	for i, e := range els {
		els[i] = url.PathEscape(e)
	}
	return strings.Join(els, "/")
}
