package migrate

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/mindmount/mindmount/memgraph"
)

// Taken says whether a path of the repository being imported into is in
// use already; an import never overwrites one.
type Taken func(rel string) bool

// frontKeys splits a markdown file into its frontmatter's top-level
// "key: value" pairs (the value unquoted when it is one quoted string) and
// the body after it. A file without frontmatter is all body.
func frontKeys(b []byte) (map[string]string, []byte) {
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], "\r\n") != "---" {
		return nil, b
	}
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], "\r\n") != "---" {
			continue
		}
		keys := map[string]string{}
		for _, l := range lines[1:i] {
			k, v, ok := strings.Cut(strings.TrimRight(l, "\r\n"), ":")
			if !ok || k == "" || k != strings.TrimSpace(k) || strings.HasPrefix(k, "#") {
				continue
			}
			v = strings.TrimSpace(v)
			if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
				v = strings.ReplaceAll(v[1:len(v)-1], `\"`, `"`)
			}
			keys[k] = v
		}
		return keys, []byte(strings.Join(lines[i+1:], ""))
	}
	return nil, b
}

// withDescription is body under frontmatter holding only a description
// (mindmount refuses keys it does not know; the others are noted).
func withDescription(rel, desc string, body []byte) []byte {
	m, _ := memgraph.Parse(rel, body)
	desc = strings.TrimSpace(desc)
	if desc == "" {
		desc = strings.TrimSpace(m.Title)
	}
	if desc == "" {
		desc = strings.TrimSuffix(path.Base(rel), ".md")
	}
	m.SetDescription(desc)
	return m.Render()
}

// dropped names the frontmatter keys an import leaves out.
func dropped(keys map[string]string, kept ...string) string {
	var out []string
	for k := range keys {
		if !contains(kept, k) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return ""
	}
	return " (frontmatter " + strings.Join(out, ", ") + " left out)"
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// unique returns rel, or rel with -2, -3 ... before ".md" when taken (by
// the repository or by the plan so far).
func (p *Plan) unique(rel string, taken Taken) string {
	used := func(r string) bool {
		if taken != nil && taken(r) {
			return true
		}
		for _, c := range p.Changes {
			if c.Path == r && !c.Delete {
				return true
			}
		}
		return false
	}
	if !used(rel) {
		return rel
	}
	base := strings.TrimSuffix(rel, ".md")
	for n := 2; ; n++ {
		if r := fmt.Sprintf("%s-%d.md", base, n); !used(r) {
			return r
		}
	}
}

// memoryRel is a memory path in dir for a file name: its slug, unique.
func (p *Plan) memoryRel(dir, name string, taken Taken) string {
	slug := memgraph.Slug(strings.TrimSuffix(name, ".md"))
	return p.unique(dir+"/"+slug+".md", taken)
}

// ClaudeCode plans the import of Claude Code's file memory, read from a
// folder laid out as ~/.claude is: CLAUDE.md, and the auto memory of each
// project in projects/<project>/memory/ (MEMORY.md, the index Claude Code
// loads into every session, and topic files with name, description and
// type in their frontmatter). A folder holding MEMORY.md itself is taken
// as one project's memory. CLAUDE.md is loaded into every session, so it
// becomes a system/ block; a topic of type user becomes a user memory,
// feedback (how to work with the user) a character memory, and project and
// reference notes, like MEMORY.md, external memory under
// claude-code/<project>/, listed with their description and read on
// demand.
func ClaudeCode(fsys fs.FS, taken Taken) (Plan, error) {
	var p Plan
	if isFile(fsys, "CLAUDE.md") {
		b, err := readSmall(fsys, "CLAUDE.md")
		if err != nil {
			return Plan{}, err
		}
		rel := p.unique(memgraph.SystemDir+"/claude-code.md", taken)
		_, body := frontKeys(b)
		p.write(rel, withDescription(rel, "Claude Code's instructions (CLAUDE.md)", body), "CLAUDE.md -> "+rel)
	}
	type project struct{ name, dir string }
	var projects []project
	if isFile(fsys, "MEMORY.md") {
		projects = append(projects, project{"project", "."})
	}
	ents, _ := fs.ReadDir(fsys, "projects")
	for _, e := range ents {
		if e.IsDir() && isDir(fsys, "projects/"+e.Name()+"/memory") {
			projects = append(projects, project{e.Name(), "projects/" + e.Name() + "/memory"})
		}
	}
	for _, pr := range projects {
		if err := p.claudeProject(fsys, pr.name, pr.dir, taken); err != nil {
			return Plan{}, err
		}
	}
	return p, nil
}

func (p *Plan) claudeProject(fsys fs.FS, name, dir string, taken Taken) error {
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return err
	}
	ext := "claude-code/" + memgraph.Slug(name)
	for _, e := range ents {
		if ok, err := wanted(dir, e); err != nil || !ok {
			if err != nil {
				return err
			}
			continue
		}
		src := path.Join(dir, e.Name())
		b, err := readSmall(fsys, src)
		if err != nil {
			return err
		}
		keys, body := frontKeys(b)
		desc := keys["description"]
		if e.Name() == "MEMORY.md" {
			rel := p.unique(ext+"/MEMORY.md", taken)
			p.write(rel, withDescription(rel, "Claude Code's memory index of "+name, body), src+" -> "+rel)
			continue
		}
		var rel string
		switch keys["type"] {
		case "user":
			rel = p.memoryRel(memgraph.UserDir, e.Name(), taken)
		case "feedback":
			rel = p.memoryRel(memgraph.CharacterDir, e.Name(), taken)
		default:
			rel = p.unique(ext+"/"+memgraph.Slug(strings.TrimSuffix(e.Name(), ".md"))+".md", taken)
		}
		data := withDescription(rel, desc, body)
		if k := memgraph.KindOf(rel); (k == memgraph.KindUser || k == memgraph.KindCharacter) && !bytes.Contains(data, []byte("\n## Fact")) {
			// A memory's text is its Fact.
			m, _ := memgraph.Parse(rel, data)
			title := keys["name"]
			if title == "" {
				title = m.Front.Description
			}
			data = memgraph.NewMemory(rel, title, m.Front.Description, string(bytes.TrimSpace(body)), "", time.Time{}).Render()
		}
		p.write(rel, data, src+" -> "+rel+dropped(keys, "description"))
	}
	return nil
}

// Letta plans the import of a Letta MemFS folder (a context repository):
// markdown files with a description in their frontmatter; system/ is
// loaded into the agent's prompt on every turn, everything else is found
// through the tree and read when relevant, just as mindmount's system/
// blocks and external memory are. system/persona.md becomes character.md
// and system/human.md user.md; every other file keeps its path (a path
// mindmount reserves goes under letta/). Frontmatter keys mindmount does
// not know (limit, say) are left out and noted.
func Letta(fsys fs.FS, taken Taken) (Plan, error) {
	var p Plan
	err := fs.WalkDir(fsys, ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if hasControl(d.Name()) {
				return sourceProblem(rel, ErrControlName)
			}
			if rel != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir // .git, .letta
			}
			return nil
		}
		if ok, err := wanted(path.Dir(rel), d); err != nil || !ok {
			return err
		}
		b, err := readSmall(fsys, rel)
		if err != nil {
			return err
		}
		keys, body := frontKeys(b)
		to := rel
		switch {
		case rel == "system/persona.md":
			to = memgraph.CharacterFile
		case rel == "system/human.md":
			to = memgraph.UserFile
		case rel == memgraph.CharacterFile, rel == memgraph.UserFile, memgraph.IsSynthesized(rel),
			strings.HasPrefix(rel, memgraph.UserDir+"/"), strings.HasPrefix(rel, memgraph.CharacterDir+"/"),
			strings.HasPrefix(rel, memgraph.TranscriptsDir+"/"), !memgraph.IsMemoryPath(rel):
			to = "letta/" + rel
		}
		if memgraph.IsSkillPath(to) {
			// A skill is in the open Agent Skills format already: copied
			// whole, its frontmatter (name, metadata) kept.
			to = p.unique(to, taken)
			p.write(to, b, rel+" -> "+to)
			return nil
		}
		if taken != nil && taken(to) && (to == memgraph.CharacterFile || to == memgraph.UserFile) {
			// The repository's own block is replaced: it is the template's
			// in a new repository, and the import's reason to exist.
			p.write(to, withDescription(to, keys["description"], body), rel+" -> "+to+" (replacing it)"+dropped(keys, "description"))
			return nil
		}
		to = p.unique(to, taken)
		p.write(to, withDescription(to, keys["description"], body), rel+" -> "+to+dropped(keys, "description"))
		return nil
	})
	return p, err
}
