package memgraph

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SkillUsesFile counts how often each skill's SKILL.md was read (through
// the mount, MCP or HTTP), relative to the git directory: a use never
// touches the skill's file or the history, and the counts are written in
// batches (every skillUseBatch uses or skillUseEvery, whichever is first),
// not on every read.
const SkillUsesFile = "mindmount/skill-uses.json"

// Limits and default of the skills list in the context (skill_list_chars).
const (
	DefaultSkillListChars = 8000
	MinSkillListChars     = 200
	MaxSkillListChars     = 1_000_000
)

const (
	skillUseBatch = 20
	skillUseEvery = time.Minute
)

// skillUses is the use counter of a graph: counts by skill name, who
// keeps them (save; nil: they live in memory only) and how many uses are
// not saved yet. The graph writes no file: the tracker hands it a save
// (KeepSkillUses) that writes them under .git.
type skillUses struct {
	wmu     sync.Mutex // one save at a time, newest counts last
	mu      sync.Mutex
	save    func(data []byte) error
	counts  map[string]int
	pending int
	written time.Time
}

// KeepSkillUses hands g the skill use counts saved so far (counts, from
// ParseSkillUses; nil, or unsaved uses pending, keeps what g counts) and
// the keeper of new ones (save: FlushSkillUses hands it the counts as
// JSON, the content of SkillUsesFile; nil: they live in memory only). The
// graph reads and writes no file for them: the tracker does.
func (g *Graph) KeepSkillUses(counts map[string]int, save func(data []byte) error) {
	u := &g.uses
	u.wmu.Lock()
	defer u.wmu.Unlock()
	u.mu.Lock()
	defer u.mu.Unlock()
	if counts != nil && u.pending == 0 {
		u.counts, u.written = counts, time.Now()
	}
	u.save = save
}

// ParseSkillUses reads the content of SkillUsesFile: the use counts by
// skill name, empty when data is damaged; invalid names and negative
// counts are dropped.
func ParseSkillUses(data []byte) map[string]int {
	counts := map[string]int{}
	_ = json.Unmarshal(data, &counts) // a damaged file counts from zero
	for k, v := range counts {
		if !ValidSkillName(k) || v < 0 {
			delete(counts, k)
		}
	}
	return counts
}

// RecordSkillUse counts one read of rel when it is a skill's SKILL.md. The
// counts reach the file (and the ranking) in batches; FlushSkillUses
// writes them at once.
func (g *Graph) RecordSkillUse(rel string) {
	if !IsSkillFile(rel) {
		return
	}
	name := strings.Split(rel, "/")[1]
	u := &g.uses
	u.mu.Lock()
	if u.counts == nil {
		u.counts = map[string]int{}
	}
	u.counts[name]++
	u.pending++
	due := u.pending >= skillUseBatch || time.Since(u.written) >= skillUseEvery
	u.mu.Unlock()
	if due {
		_ = g.FlushSkillUses() // kept in memory and tried again with the next batch
	}
}

// FlushSkillUses hands the counts not saved yet to the save
// (KeepSkillUses) and lets the context rank by them.
func (g *Graph) FlushSkillUses() error {
	u := &g.uses
	u.wmu.Lock()
	defer u.wmu.Unlock()
	u.mu.Lock()
	if u.pending == 0 {
		u.mu.Unlock()
		return nil
	}
	data, _ := json.Marshal(u.counts)
	save := u.save
	u.pending, u.written = 0, time.Now()
	u.mu.Unlock()
	g.mu.Lock()
	g.bump() // the ranking of the skills list changed
	g.mu.Unlock()
	if save == nil {
		return nil
	}
	return save(data)
}

// SkillUses returns a copy of the current counts by skill name.
func (g *Graph) SkillUses() map[string]int {
	g.uses.mu.Lock()
	defer g.uses.mu.Unlock()
	out := make(map[string]int, len(g.uses.counts))
	for k, v := range g.uses.counts {
		out[k] = v
	}
	return out
}

// SkillEntry is one skill of a listing.
type SkillEntry struct {
	Path        string // skills/<name>/SKILL.md
	Name        string
	Description string
	Status      SkillStatus
	Uses        int
}

// Skills returns every valid skill (any status), most used first, then by
// name.
func (g *Graph) Skills() []SkillEntry {
	uses := g.SkillUses()
	g.mu.RLock()
	var out []SkillEntry
	for rel, e := range g.files {
		if e.valid == nil || !IsSkillFile(rel) {
			continue
		}
		m := e.valid.m
		st := SkillActive
		if !m.Active() {
			st = SkillStatus(m.Front.Status)
		}
		out = append(out, SkillEntry{Path: rel, Name: m.Title, Description: m.Front.Description, Status: st, Uses: uses[m.Title]})
	}
	g.mu.RUnlock()
	SortSkills(out)
	return out
}

// SortSkills orders a listing most used first, then by name.
func SortSkills(list []SkillEntry) {
	slices.SortFunc(list, func(a, b SkillEntry) int {
		if a.Uses != b.Uses {
			return b.Uses - a.Uses
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// SkillListHint is how the footer of a cut skills list says to see them all.
const SkillListHint = "mindmount skills list"

// SkillsList renders the active skills as "- path — description" lines,
// most used first, within max characters (0: DefaultSkillListChars). When
// skills are left out a last line says how many and how to list them all;
// it counts against max too. "" when there is no active skill.
func SkillsList(list []SkillEntry, max int) string {
	if max <= 0 {
		max = DefaultSkillListChars
	}
	var active []SkillEntry
	for _, s := range list {
		if s.Status == SkillActive {
			active = append(active, s)
		}
	}
	if len(active) == 0 {
		return ""
	}
	footer := func(n int) string {
		return "- … " + strconv.Itoa(n) + " more " + Plural(n, "skill", "skills") + " not shown; list them all with: " + SkillListHint + "\n"
	}
	var b strings.Builder
	for i, s := range active {
		line := "- " + SafeLine(s.Path) + " — " + SafeLine(s.Description) + "\n"
		rest := len(active) - i - 1
		room := max - b.Len() - len(line)
		if rest > 0 {
			room -= len(footer(rest))
		}
		if room < 0 {
			b.WriteString(footer(len(active) - i))
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// skillsText is the context's skills section, within the repository's
// skill_list_chars. Caller holds g.mu for reading.
func (g *Graph) skillsText() string {
	if len(g.skills) == 0 {
		return ""
	}
	uses := g.SkillUses()
	list := make([]SkillEntry, 0, len(g.skills))
	for _, rel := range g.skills {
		m := g.files[rel].valid.m
		list = append(list, SkillEntry{Path: rel, Name: m.Title, Description: m.Front.Description, Status: SkillActive, Uses: uses[m.Title]})
	}
	SortSkills(list)
	set, _ := g.settings.get(g.tree)
	body := SkillsList(list, set.SkillListChars)
	return "\n## Skills\n\nProcedures you know, most used first; read a skill's SKILL.md before you follow it (file — when to use it):\n\n" + body
}
