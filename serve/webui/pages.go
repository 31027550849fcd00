package webui

import (
	"bytes"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// page is what every page's template gets besides its own data.
type page struct {
	Title  string
	Base   string // links: {{.Base}}/log
	Static string // assets: {{.Static}}/style.css
	CSRF   string
	User   string // serve: whose memory this is
	Admin  bool
	Prefix string
	Nav    string // the current page, for the menu
	Flash  string // the result of the action that led here
	Head   string // the commit the page shows, for live updates
	Here   string // this page's path, where an action returns to
	Teams  bool   // the user belongs to a team: the menu links the teams page
	Data   any
}

func (s *Server) page(v *view, nav, title string, data any) page {
	head, _ := v.rt.Repo.Head()
	return page{Title: title, Base: v.base, Static: s.cfg.Prefix + "/static", CSRF: v.sess.csrf, User: v.user,
		Admin: v.sess.admin, Prefix: s.cfg.Prefix, Nav: nav, Flash: v.r.URL.Query().Get("done"), Head: head,
		Here: v.r.URL.Path, Teams: s.cfg.Teams != nil && len(s.cfg.Teams.Teams()) > 0, Data: data}
}

// memRow is one memory in a list.
type memRow struct {
	Path, Title, Desc, Topic string
	Status                   string
	Uses                     int
	LastUsed                 string
	Rank                     int
	Retired                  bool
}

func rowOf(m *memgraph.Memory, rank int) memRow {
	r := memRow{Path: m.Path, Title: m.Title, Desc: m.Front.Description, Topic: m.Front.Topic,
		Status: string(m.Front.Status), Uses: m.Uses, Rank: rank, Retired: !m.Active()}
	if r.Status == "" {
		r.Status = string(memgraph.StatusActive)
	}
	if !m.LastUsed.IsZero() {
		r.LastUsed = m.LastUsed.Format("2006-01-02")
	}
	return r
}

// indexSection is one ranked index: the memories the agent sees (above
// the cut) and those that fall below its budget.
type indexSection struct {
	Name, File    string
	Above, Below  []memRow
	MoreBelow     int // rows of Below not listed (see ?all=1)
	Total, Budget int
	Retired       []memRow
}

// listCap bounds the rows below the cut listed without ?all=1.
const listCap = 200

func (s *Server) memories(v *view) {
	g := v.rt.Graph
	all := v.r.URL.Query().Get("all") == "1"
	showRetired := v.r.URL.Query().Get("retired") == "1"
	gv := s.views.get(g).lists(g)
	var sections []indexSection
	for i, k := range []memgraph.Kind{memgraph.KindUser, memgraph.KindCharacter} {
		kr := gv.kinds[i]
		// The budget is read on each page (SetIndexTokens changes it
		// without a new graph version); the index is cached by the graph.
		shown := min(indexShown(g.Index(k)), len(kr.ranked))
		sec := indexSection{Name: "User memory", File: memgraph.UserIndexFile, Total: len(kr.ranked), Budget: g.IndexTokens()}
		if k == memgraph.KindCharacter {
			sec.Name, sec.File = "Character memory", memgraph.CharIndexFile
		}
		sec.Above = kr.ranked[:shown:shown]
		below := kr.ranked[shown:]
		if !all && len(below) > listCap {
			sec.MoreBelow = len(below) - listCap
			below = below[:listCap]
		}
		sec.Below = below
		if showRetired {
			sec.Retired = kr.retired
		}
		sections = append(sections, sec)
	}
	var external []memRow
	for _, r := range gv.external {
		if !r.Retired || showRetired {
			external = append(external, r)
		}
	}
	s.render(v.w, "memories", http.StatusOK, s.page(v, "memories", "Memories", map[string]any{
		"Blocks": gv.blocks, "Sections": sections, "External": external, "ShowRetired": showRetired, "All": all,
	}))
}

// blockOrder puts character.md, then user.md, then system/ first, as the
// context does.
func blockOrder(p string) int {
	switch p {
	case memgraph.CharacterFile:
		return 0
	case memgraph.UserFile:
		return 1
	}
	return 2
}

// indexShown counts the memories a rendered index lists (its "- " lines).
func indexShown(idx []byte) int {
	n := 0
	for _, l := range bytes.Split(idx, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("- ")) {
			n++
		}
	}
	return n
}

// memPath checks the path of /m/<path>: a clean repository path of a file
// the graph knows. Anything else (.., .git, a file outside the memory) is
// not found.
func memPath(g *memgraph.Graph, p string) (string, bool) {
	rel, ok := memgraph.CleanRel(p)
	if !ok || rel == ".git" || strings.HasPrefix(rel, ".git/") || !memgraph.IsMemoryPath(rel) {
		return "", false
	}
	if g.Get(rel) != nil {
		return rel, true
	}
	_, known := slices.BinarySearch(g.Paths(), rel)
	return rel, known
}

// readWorktree reads rel from the work tree without following a link out
// of it (os.Root).
func readWorktree(dir, rel string) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(rel)
}

// link is a related memory.
type link struct {
	Rel, Path, Desc string
	Missing         bool
}

// historyLimit bounds the commits shown on a memory's page.
const historyLimit = 50

// historyBudget bounds the time git log spends finding them while the
// history index does not reach HEAD yet (a variable for tests).
var historyBudget = 2 * time.Second

func (s *Server) memory(v *view, p string) {
	g := v.rt.Graph
	rel, ok := memPath(g, p)
	if !ok {
		http.Error(v.w, "no such memory", http.StatusNotFound)
		return
	}
	data, err := readWorktree(v.rt.Dir, rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("web page cannot read memory", "path", rel, "err", err)
		http.Error(v.w, "cannot read that memory", http.StatusInternalServerError)
		return
	}
	m := g.Get(rel)
	_, probs := memgraph.Parse(rel, data)
	for _, p := range v.rt.Tracker.Invalid() {
		if p.Path == rel && !slices.Contains(probs, p) {
			probs = append(probs, p)
		}
	}
	d := map[string]any{"Path": rel, "Problems": probs, "Body": renderMarkdown(memgraph.Body(string(data))), "Raw": string(data)}
	if m != nil {
		d["Memory"] = rowOf(m, 0)
		d["Front"] = frontRows(m.Front)
		d["ReadOnly"] = m.Front.ReadOnly
		d["Kind"] = string(memgraph.KindOf(rel))
		d["Chart"] = useChart(memgraph.UseDates(rel, data), s.cfg.Now())
		var links []link
		add := func(rel, what string) {
			if rel == "" {
				return
			}
			target := rel
			if !strings.HasSuffix(target, ".md") {
				target += ".md"
			}
			l := link{Rel: what, Path: target}
			if o := g.Get(target); o != nil {
				l.Desc = o.Front.Description
			} else {
				l.Missing = true
			}
			links = append(links, l)
		}
		add(m.Front.Supersedes, "supersedes")
		add(m.Front.SupersededBy, "superseded by")
		if m.Front.Topic != "" {
			for _, o := range g.Memories(memgraph.KindOf(rel)) {
				if o.Path != rel && o.Front.Topic == m.Front.Topic {
					links = append(links, link{Rel: "same topic", Path: o.Path, Desc: o.Front.Description})
				}
			}
		}
		d["Links"] = links
	}
	hist, slow, err := pathHistory(v.r.Context(), v.rt.Repo, rel, historyLimit, historyBudget)
	if err != nil {
		s.log.Warn("web page cannot read history", "path", rel, "err", err)
	}
	d["History"] = hist
	d["HistoryCut"] = len(hist) == historyLimit
	d["HistorySlow"] = slow
	s.render(v.w, "memory", http.StatusOK, s.page(v, "memories", rel, d))
}

type kv struct{ Key, Value string }

// frontRows is the frontmatter as a table: the known keys that are set.
func frontRows(f memgraph.Frontmatter) []kv {
	var out []kv
	add := func(k, v string) {
		if v != "" {
			out = append(out, kv{k, v})
		}
	}
	add("description", f.Description)
	add("status", string(f.Status))
	add("topic", f.Topic)
	add("supersedes", f.Supersedes)
	add("superseded_by", f.SupersededBy)
	if f.ReadOnly {
		add("read_only", "true")
	}
	add("created", f.Created)
	add("source", f.Source)
	add("tags", strings.Join(f.Tags, ", "))
	add("keywords", strings.Join(f.Keywords, ", "))
	return out
}

// logPage is how many commits the timeline shows at a time.
const logPage = 100

func (s *Server) timeline(v *view) {
	q := v.r.URL.Query()
	skip, _ := strconv.Atoi(q.Get("skip"))
	skip = max(skip, 0)
	author := q.Get("author")
	cs, more, err := s.logPage(v, author, skip)
	if err != nil {
		s.log.Warn("web page cannot read the log", "err", err)
		http.Error(v.w, "cannot read the history", http.StatusInternalServerError)
		return
	}
	d := map[string]any{"Commits": cs, "Author": author, "Skip": skip}
	if more {
		d["Next"] = skip + logPage
	}
	if skip > 0 {
		d["Prev"] = max(skip-logPage, 0)
		d["HasPrev"] = true
	}
	s.render(v.w, "log", http.StatusOK, s.page(v, "log", "Timeline", d))
}

// logPage reads one page of the timeline. The newest page of all authors
// is one short git log; any other page is cut from the commit list of
// HEAD (logCache), and git shows just the commits on it.
func (s *Server) logPage(v *view, author string, skip int) (cs []commit, more bool, err error) {
	ctx := v.r.Context()
	head, err := v.rt.Repo.Head()
	if err != nil || head == "" {
		return nil, false, err
	}
	if skip == 0 && author == "" {
		// One more than a page says whether an older page exists.
		cs, err := readLog(ctx, v.rt.Dir, logQuery{Limit: logPage + 1})
		if len(cs) > logPage {
			return cs[:logPage], true, err
		}
		return cs, false, err
	}
	l, err := s.logs.list(ctx, v.rt.Dir, head)
	if err != nil {
		return nil, false, err
	}
	hashes, more := l.page(author, skip, logPage)
	if len(hashes) == 0 {
		return nil, more, nil
	}
	out, err := git(ctx, v.rt.Dir, append(append([]string{"log", logFormat, "--no-walk=unsorted"}, hashes...), "--")...)
	if err != nil {
		return nil, false, err
	}
	return parseLog(out), more, nil
}

// hitRow is one recall result with the fields the query words were found in.
type hitRow struct {
	recall.Hit
	Fields []string
}

func (s *Server) search(v *view) {
	q := strings.TrimSpace(v.r.URL.Query().Get("q"))
	all := v.r.URL.Query().Get("retired") == "1"
	// scope: personal, one of the user's teams, or all (the default), as
	// every other recall door takes it.
	sel := v.r.URL.Query().Get("scope")
	d := map[string]any{"Q": q, "Retired": all, "Scope": sel}
	if q != "" {
		hits, err := v.rt.Graph.RecallScoped(v.r.Context(), q, recall.Options{All: all, K: 50}, sel)
		if err != nil {
			s.failed(v, http.StatusBadRequest, err)
			return
		}
		rows := make([]hitRow, 0, len(hits))
		for _, h := range hits {
			rows = append(rows, hitRow{Hit: h, Fields: matched(v.rt.Graph.Get(h.Path), q)})
		}
		d["Hits"] = rows
	}
	s.render(v.w, "search", http.StatusOK, s.page(v, "search", "Search", d))
}

// matched names the fields of m that hold a word of q (case-insensitive;
// recall also matches stems, so a hit may match none literally).
func matched(m *memgraph.Memory, q string) []string {
	if m == nil {
		return nil
	}
	words := strings.Fields(strings.ToLower(q))
	var out []string
	for _, f := range []struct{ name, text string }{
		{"title", m.Title}, {"description", m.Front.Description}, {"fact", m.Fact}, {"episode", m.Episode}, {"topic", m.Front.Topic},
	} {
		t := strings.ToLower(f.text)
		for _, w := range words {
			if len(w) > 2 && strings.Contains(t, w) {
				out = append(out, f.name)
				break
			}
		}
	}
	return out
}

func (s *Server) status(v *view) {
	tr := v.rt.Tracker
	var invalid, secrets []memgraph.Problem
	seen := map[string]bool{}
	for _, p := range append(tr.Invalid(), v.rt.Graph.Problems()...) {
		if seen[p.String()] {
			continue
		}
		seen[p.String()] = true
		// A held-back secret is named by its rule, never its value.
		if errors.Is(p.Err, tracker.ErrSecret) {
			secrets = append(secrets, p)
		} else {
			invalid = append(invalid, p)
		}
	}
	d := map[string]any{"Invalid": invalid, "Secrets": secrets, "Pending": tr.Pending(), "Report": string(tr.Status())}
	if c := v.rt.Consolidator; c != nil {
		d["Consolidation"] = c.Status()
		d["CanConsolidate"] = true
		if ds, err := c.Dreams(); err == nil {
			d["Dreams"] = ds
		} else {
			s.log.Warn("web page cannot list the dreams", "err", err)
		}
	}
	s.render(v.w, "status", http.StatusOK, s.page(v, "status", "Status", d))
}

func (s *Server) graph(v *view) {
	d := s.views.get(v.rt.Graph).graph(v.rt.Graph, v.base)
	s.render(v.w, "graph", http.StatusOK, s.page(v, "graph", "Graph", map[string]any{"SVG": d.svg, "Drawn": d.drawn, "Total": d.total}))
}

// userList is the admin's first page under serve.
func (s *Server) userList(w http.ResponseWriter, r *http.Request, sess *session) {
	type row struct {
		ID, Link string
		Loaded   bool
		Err      string
	}
	var rows []row
	for _, u := range s.cfg.Users.Users() {
		e := ""
		if u.Err != nil {
			e = u.Err.Error()
		}
		rows = append(rows, row{ID: u.ID, Link: s.userBase(u.ID) + "/", Loaded: u.Loaded, Err: e})
	}
	s.render(w, "users", http.StatusOK, page{Title: "Users", Static: s.cfg.Prefix + "/static", CSRF: sess.csrf, Admin: true,
		Prefix: s.cfg.Prefix, Data: rows})
}
