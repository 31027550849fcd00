package webui

import (
	"bytes"
	"cmp"
	"fmt"
	"html/template"
	"maps"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
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
var md = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough),
		goldmark.WithRendererOptions(html.WithHardWraps()))
})

// renderMarkdown renders text to HTML that is safe to put in a page; its
// invisible format characters are shown escaped (shown's rule).
func renderMarkdown(text string) template.HTML {
	text = memgraph.SafeText(text)
	var b bytes.Buffer
	if err := md().Convert([]byte(text), &b); err != nil {
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
	active, retired, total := graphPick(g)
	ms := append(append([]gnode{}, active...), retired...)
	pos := graphLayout(active, retired)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %.0f %.0f" class="graph" role="img" aria-label="memory graph">`, graphSize, graphSize)
	graphEdges(&b, ms, pos)
	// Names fit beside the circles while there are few of them.
	labels := len(ms) <= 60
	for _, list := range [][]gnode{retired, active} {
		for _, m := range list {
			graphNode(&b, m, pos[m.path], base, labels)
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), len(ms), total // every interpolated string is escaped
}

// graphSize is the picture's width and height, in its own units.
const graphSize = 800.0

// graphPoint is where a memory's circle is drawn, and its radius.
type graphPoint struct {
	x, y, r float64
}

// graphPick chooses what the picture draws. A picture of ten thousand
// dots says nothing and costs a lot: the most used memories and some
// retired ones are drawn, the rest counted in total. The retired ones
// drawn are the last by path, user memories before character memories.
func graphPick(g *memgraph.Graph) (active, retired []gnode, total int) {
	g.EachRanked(func(m *memgraph.Memory, rank int) {
		total++
		switch {
		case rank == 0:
			retired = append(retired, gnodeOf(m))
		case rank <= graphActive:
			active = append(active, gnodeOf(m))
		}
	}, memgraph.KindUser, memgraph.KindCharacter)
	slices.SortFunc(retired, byKindAndPath)
	if len(retired) > graphRetired {
		retired = retired[len(retired)-graphRetired:]
	}
	return active, retired, total
}

// graphLayout places the active memories on an inner circle (nearer the
// centre when there are few) and the retired ones on an outer circle,
// each sized by its uses.
func graphLayout(active, retired []gnode) map[string]graphPoint {
	c := graphSize / 2
	pos := map[string]graphPoint{}
	place := func(list []gnode, radius float64) {
		for i, m := range list {
			a := 2 * math.Pi * float64(i) / float64(max(len(list), 1))
			r := 4 + 3*math.Sqrt(float64(m.uses))
			pos[m.path] = graphPoint{c + radius*math.Cos(a), c + radius*math.Sin(a), min(r, 30)}
		}
	}
	inner := 0.30 * graphSize
	if len(active) > 60 {
		inner = 0.38 * graphSize
	}
	place(active, inner)
	place(retired, 0.46*graphSize)
	return pos
}

// graphEdges draws one line per supersede link between two drawn
// memories, then a chain through each topic's memories.
func graphEdges(b *strings.Builder, ms []gnode, pos map[string]graphPoint) {
	line := func(a, c graphPoint, class string) {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" class="%s"/>`, a.x, a.y, c.x, c.y, class)
	}
	byTopic := map[string][]string{}
	edges := map[[2]string]bool{}
	for _, m := range ms {
		for _, s := range []string{m.supersedes, m.supersededBy} {
			if s == "" {
				continue
			}
			if !strings.HasSuffix(s, ".md") {
				s += ".md"
			}
			pair := [2]string{min(m.path, s), max(m.path, s)}
			if o, ok := pos[s]; ok && !edges[pair] {
				edges[pair] = true
				line(pos[m.path], o, "edge-supersedes")
			}
		}
		if m.topic != "" {
			byTopic[m.topic] = append(byTopic[m.topic], m.path)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(byTopic)) {
		paths := byTopic[t]
		for i := 1; i < len(paths); i++ {
			line(pos[paths[i-1]], pos[paths[i]], "edge-topic")
		}
	}
}

// graphNode draws one memory: a circle linking to its page, its path,
// description and uses as the tooltip, and its name beside it when
// labels fit. Every string is escaped.
func graphNode(b *strings.Builder, m gnode, n graphPoint, base string, label bool) {
	class := "node-" + string(memgraph.KindOf(m.path))
	if m.retired {
		class = "node-retired"
	}
	href := base + "/m/" + pathEscape(m.path)
	fmt.Fprintf(b, `<a href="%s"><circle cx="%.1f" cy="%.1f" r="%.1f" class="%s"><title>%s — %s (%d %s)</title></circle></a>`,
		template.HTMLEscapeString(href), n.x, n.y, n.r, class,
		svgText(m.path), svgText(m.desc), m.uses, memgraph.Plural(m.uses, "use", "uses"))
	if label {
		x, anchor := labelAt(n.x, n.r, graphSize/2)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="%s" class="label">%s</text>`, x, n.y+4, anchor, svgText(m.slug))
	}
}

// byKindAndPath orders user memories before character memories, each by
// path.
func byKindAndPath(a, b gnode) int {
	if c := cmp.Compare(kindOrder(a.path), kindOrder(b.path)); c != 0 {
		return c
	}
	return strings.Compare(a.path, b.path)
}

// labelAt is where the name of a memory drawn at x with radius r goes, and
// its text-anchor: toward the centre cx, so the picture's edge never cuts
// it (a name on the right half ends left of its circle; "has-cat-miso"
// on the outer ring's right edge was drawn "has").
func labelAt(x, r, cx float64) (float64, string) {
	if x > cx {
		return x - r - 3, "end"
	}
	return x + r + 3, "start"
}

// svgText is s escaped for the graph's labels, on one line with its
// invisible format characters shown (shown's rule for the templates).
func svgText(s string) string { return template.HTMLEscapeString(memgraph.SafeLine(s)) }

// gnode is what the graph draws of a memory (copied out of the graph).
type gnode struct {
	path, slug, desc, topic  string
	supersedes, supersededBy string
	uses                     int
	retired                  bool
}

func gnodeOf(m *memgraph.Memory) gnode {
	return gnode{path: m.Path, slug: m.Slug(), desc: m.Front.Description, topic: m.Front.Topic,
		supersedes: m.Front.Supersedes, supersededBy: m.Front.SupersededBy, uses: m.Uses, retired: !m.Active()}
}

// kindOrder puts user memories before character memories.
func kindOrder(p string) int {
	if memgraph.KindOf(p) == memgraph.KindCharacter {
		return 1
	}
	return 0
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
