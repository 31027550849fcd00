package migrate

import (
	"bytes"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/mindmount/mindmount/memgraph"
)

// Change is one file of a plan: written with Data, or removed.
type Change struct {
	Path   string
	Data   []byte
	Delete bool
}

// Plan is what an import changes, and one line per change for the commit
// message and the user.
type Plan struct {
	Changes []Change
	Lines   []string
}

func (p *Plan) write(rel string, data []byte, line string) {
	p.Changes = append(p.Changes, Change{Path: rel, Data: data})
	p.Lines = append(p.Lines, line)
}

func (p *Plan) move(from, to string, data []byte, line string) {
	if from != to {
		p.Changes = append(p.Changes, Change{Path: from, Delete: true})
	}
	p.write(to, data, line)
}

// The reference system's layout (viral-git-agent-memory): SOUL.md and
// USER.md (character.md and user.md before its rename), one memory per
// file in USER_memory/ and SOUL_memory/ (user_memory/ and
// character_memory/ before), each "# Title", "## Fact", "## Episode",
// "## Access log" with "used, DD.MM.YY" lines, "## Pinned" on a safety
// fact and "## Contradicted" on a retired one; an old template's
// user_memory.md and character_memory.md indexes at the top.
const (
	viralSoul     = "SOUL.md"
	viralUser     = "USER.md"
	viralUserDir  = "USER_memory"
	viralSoulDir  = "SOUL_memory"
	viralPinned   = "## Pinned"
	viralContra   = "## Contradicted"
	maxMemoryRead = 1 << 20 // a larger "memory" is not one the reference wrote
)

// LooksViral reports whether the tree is a viral-git-agent-memory
// repository not imported yet: no .mindmount/ folder (every mindmount
// repository has one, or the state folder from before the rename), and the reference's
// top-level names or a memory file in its format (no frontmatter) in a
// memory folder.
func LooksViral(fsys fs.FS) bool {
	if isDir(fsys, ".mindmount") || isDir(fsys, memgraph.LegacyStateDir) {
		return false
	}
	for _, n := range []string{viralSoul, viralUser} {
		if isFile(fsys, n) {
			return true
		}
	}
	if isDir(fsys, viralUserDir) || isDir(fsys, viralSoulDir) {
		return true
	}
	// The older lower-case folders are mindmount's names too: the
	// reference's only when no memory there has frontmatter (one invalid
	// file of a mindmount repository does not make it the reference's).
	seen := false
	for _, d := range []string{memgraph.UserDir, memgraph.CharacterDir} {
		ents, _ := fs.ReadDir(fsys, d)
		for _, e := range ents {
			if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			b, err := readSmall(fsys, d+"/"+e.Name())
			if err != nil || bytes.HasPrefix(b, []byte("---")) {
				return false
			}
			seen = true
		}
	}
	return seen
}

func isDir(fsys fs.FS, name string) bool {
	st, err := fs.Stat(fsys, name)
	return err == nil && st.IsDir()
}

func isFile(fsys fs.FS, name string) bool {
	st, err := fs.Stat(fsys, name)
	return err == nil && st.Mode().IsRegular()
}

// Viral plans the import of a viral-git-agent-memory repository in place:
// SOUL.md becomes character.md and USER.md user.md (kept as they are);
// every memory in the reference's format moves to user_memory/ or
// character_memory/ under a valid slug, with frontmatter added in front
// of its text, which stays byte for byte: a description (its title),
// status: contradicted when it has "## Contradicted", pinned: true when
// it has "## Pinned". The use count is the reference's own (the "used,"
// lines of "## Access log"), so the ranking is the one it had. Files
// already in mindmount's format are left alone, and so is everything
// else (other files and folders stay where they are). The old indexes
// are removed: mindmount makes its own.
func Viral(fsys fs.FS) (Plan, error) {
	var p Plan
	for _, mv := range [][2]string{{viralSoul, memgraph.CharacterFile}, {viralUser, memgraph.UserFile}} {
		if ok, err := regularFile(fsys, mv[0]); err != nil || !ok {
			if err != nil {
				return Plan{}, err
			}
			continue
		}
		if isFile(fsys, mv[1]) {
			p.Lines = append(p.Lines, fmt.Sprintf("%s left as it is: %s exists too", mv[0], mv[1]))
			continue
		}
		b, err := readSmall(fsys, mv[0])
		if err != nil {
			return Plan{}, err
		}
		p.move(mv[0], mv[1], b, fmt.Sprintf("%s -> %s", mv[0], mv[1]))
	}
	for _, idx := range []string{memgraph.UserIndexFile, memgraph.CharIndexFile} {
		if isFile(fsys, idx) {
			p.Changes = append(p.Changes, Change{Path: idx, Delete: true})
			p.Lines = append(p.Lines, idx+" removed: mindmount makes the index itself")
		}
	}
	for _, k := range []struct {
		to   string
		from []string
	}{
		{memgraph.UserDir, []string{memgraph.UserDir, viralUserDir}},
		{memgraph.CharacterDir, []string{memgraph.CharacterDir, viralSoulDir}},
	} {
		if err := p.memories(fsys, k.to, k.from); err != nil {
			return Plan{}, err
		}
	}
	return p, nil
}

// memories plans the memory files of the folders from, all going to to.
func (p *Plan) memories(fsys fs.FS, to string, from []string) error {
	taken := map[string]bool{}
	type file struct{ rel, slug string }
	var todo []file
	for _, dir := range from {
		ents, err := fs.ReadDir(fsys, dir)
		if err != nil {
			continue // no such folder
		}
		for _, e := range ents {
			name := e.Name()
			if ok, err := wanted(dir, e); err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			rel := dir + "/" + name
			slug := strings.TrimSuffix(name, ".md")
			b, err := readSmall(fsys, rel)
			if err != nil {
				return err
			}
			if dir == to && bytes.HasPrefix(b, []byte("---")) && memgraph.ValidSlug(slug) {
				taken[slug] = true // already mindmount's: stays, and keeps its name
				continue
			}
			todo = append(todo, file{rel, slug})
		}
	}
	// Valid names first, so a file keeps its name whenever it can.
	sort.SliceStable(todo, func(i, j int) bool {
		return memgraph.ValidSlug(todo[i].slug) && !memgraph.ValidSlug(todo[j].slug)
	})
	for _, f := range todo {
		b, err := readSmall(fsys, f.rel)
		if err != nil {
			return err
		}
		slug, err := memgraph.UniqueSlug(f.slug, func(s string) bool { return taken[s] })
		if err != nil {
			return err
		}
		taken[slug] = true
		rel := to + "/" + slug + ".md"
		data, note := convertViral(rel, f.slug, b)
		line := f.rel
		if f.rel != rel {
			line += " -> " + rel
		}
		if note != "" {
			line += " (" + note + ")"
		}
		p.move(f.rel, rel, data, line)
	}
	return nil
}

func readSmall(fsys fs.FS, rel string) ([]byte, error) {
	if hasControl(rel) {
		return nil, sourceProblem(rel, ErrControlName)
	}
	st, err := fs.Lstat(fsys, rel)
	if err != nil {
		return nil, err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return nil, sourceProblem(rel, ErrSymlink)
	}
	if st.Size() > maxMemoryRead {
		return nil, fmt.Errorf("%s: %d bytes, more than a memory file holds; move it out of the memory folder first", rel, st.Size())
	}
	return fs.ReadFile(fsys, rel)
}

// convertViral puts frontmatter in front of a memory in the reference's
// format and returns the new file and what it noted (pinned,
// contradicted).
func convertViral(rel, oldSlug string, b []byte) ([]byte, string) {
	m, _ := memgraph.Parse(rel, b) // "missing frontmatter" is what we add
	desc := strings.TrimSpace(m.Title)
	if desc == "" {
		desc = strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(oldSlug, "-", " "), "_", " "))
	}
	if desc == "" {
		desc = "Imported memory"
	}
	m.SetDescription(desc)
	var notes []string
	text := string(b)
	if hasHeading(text, viralContra) {
		m.SetStatus(memgraph.StatusContradicted, "")
		notes = append(notes, "contradicted")
	}
	if hasHeading(text, viralPinned) {
		m.SetPinned(true)
		notes = append(notes, "pinned")
	}
	return m.Render(), strings.Join(notes, ", ")
}

// hasHeading reports whether a line of text is the heading h, as the
// reference's `"## Pinned" in content` test means it.
func hasHeading(text, h string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimRight(l, " \r") == h {
			return true
		}
	}
	return false
}

// sortedPaths is for tests and messages: the plan's paths, sorted.
func (p Plan) sortedPaths() []string {
	var out []string
	for _, c := range p.Changes {
		s := c.Path
		if c.Delete {
			s = "-" + s
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
