package webui

import (
	"net/http"
	"strings"

	"github.com/mindmount/mindmount/memgraph"
)

// The skills page (/skills): every skill of the repository with its
// status, description and uses, the skills a dream waiting for review
// would add or change, and one skill (/skills/<name>) with its SKILL.md,
// the files of its folder and the history of that folder. A draft is
// reviewed where its dream is (the status page's approve and reject):
// this page links there and adds no second way to approve.

// skillRow is one skill in the list.
type skillRow struct {
	Name, Path, Desc, Status string
	Uses                     int
}

// pendingSkill is a skill a dream waiting for review adds or changes.
type pendingSkill struct {
	Name, Desc, Status string
	Dream              int
	New                bool
}

// skillFileRow is one file of a skill's folder as HEAD holds it.
type skillFileRow struct {
	Path string
	Exec bool
}

// skills answers /skills and /skills/<name>.
func (s *Server) skills(v *view, rest string) {
	if name := strings.TrimPrefix(rest, "/"); name != "" {
		s.skill(v, name)
		return
	}
	var rows []skillRow
	for _, e := range v.rt.Graph.Skills() {
		rows = append(rows, skillRow{Name: e.Name, Path: e.Path, Desc: e.Description, Status: string(e.Status), Uses: e.Uses})
	}
	s.render(v.w, "skills", http.StatusOK, s.page(v, "skills", "Skills", map[string]any{
		"Skills": rows, "Pending": s.pendingSkills(v)}))
}

// pendingSkills lists the SKILL.md files each dream waiting for review
// adds or changes, read at the dream's tip.
func (s *Server) pendingSkills(v *view) []pendingSkill {
	c := v.rt.Consolidator
	if c == nil {
		return nil
	}
	ds, err := c.Dreams()
	if err != nil {
		s.log.Warn("web page cannot list the dreams", "err", err)
		return nil
	}
	var out []pendingSkill
	for _, d := range ds {
		paths, err := v.rt.Repo.Changed(d.Base, d.Tip)
		if err != nil {
			continue
		}
		for _, p := range paths {
			if !memgraph.IsSkillFile(p) {
				continue
			}
			data, ok, err := v.rt.Repo.ReadAt(d.Tip, p)
			if err != nil || !ok {
				continue
			}
			sk, _ := memgraph.ParseSkill(p, data)
			_, had, _ := v.rt.Repo.ReadAt(d.Base, p)
			out = append(out, pendingSkill{Name: sk.Name, Desc: sk.Description, Status: string(sk.Status), Dream: d.N, New: !had})
		}
	}
	return out
}

// skill answers /skills/<name>: a skill the graph knows, else 404 (a name
// that is not a skill's folder name never reaches the file system).
func (s *Server) skill(v *view, name string) {
	var entry *memgraph.SkillEntry
	if memgraph.ValidSkillName(name) {
		for _, e := range v.rt.Graph.Skills() {
			if e.Name == name {
				entry = &e
				break
			}
		}
	}
	if entry == nil {
		http.Error(v.w, "no such skill", http.StatusNotFound)
		return
	}
	data, err := readWorktree(v.rt.Dir, entry.Path)
	if err != nil {
		s.log.Warn("web page cannot read skill", "path", entry.Path, "err", err)
		http.Error(v.w, "cannot read that skill", http.StatusInternalServerError)
		return
	}
	sk, probs := memgraph.ParseSkill(entry.Path, data)
	folder := sk.Folder()
	d := map[string]any{"Skill": skillRow{Name: entry.Name, Path: entry.Path, Desc: sk.Description, Status: string(entry.Status), Uses: entry.Uses},
		"Front": skillFront(sk), "Body": renderMarkdown(sk.Body), "Problems": probs, "Folder": folder, "Files": s.skillFiles(v, folder)}
	hist, slow, err := readLogWithin(v.r.Context(), v.rt.Dir, logQuery{Path: folder, Limit: historyLimit, Patch: true}, historyBudget)
	if err != nil {
		s.log.Warn("web page cannot read history", "path", folder, "err", err)
	}
	d["History"], d["HistoryCut"], d["HistorySlow"] = hist, len(hist) == historyLimit, slow
	s.render(v.w, "skills", http.StatusOK, s.page(v, "skills", entry.Name, d))
}

// skillFiles lists the files HEAD holds in a skill's folder, with their
// executable bit.
func (s *Server) skillFiles(v *view, folder string) []skillFileRow {
	files, err := v.rt.Repo.HeadFiles(folder)
	if err != nil {
		s.log.Warn("web page cannot list a skill's files", "path", folder, "err", err)
		return nil
	}
	out := make([]skillFileRow, 0, len(files))
	for _, f := range files {
		exec, _, _ := v.rt.Repo.HeadExec(f)
		out = append(out, skillFileRow{Path: f, Exec: exec})
	}
	return out
}

// skillFront is a skill's frontmatter as a table: the keys that are set.
func skillFront(sk *memgraph.Skill) []kv {
	var out []kv
	add := func(k, v string) {
		if v != "" {
			out = append(out, kv{k, v})
		}
	}
	add("name", sk.Name)
	add("description", sk.Description)
	add("status", string(sk.Status))
	add("source", sk.Source)
	add("license", sk.License)
	add("compatibility", sk.Compatibility)
	add("allowed-tools", strings.Join(sk.AllowedTools, " "))
	return out
}
