package migrate

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mindmount/mindmount/memgraph"
)

// apply returns the tree fsys with plan p applied, as a map.
func apply(t *testing.T, fsys fs.FS, p Plan) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	fs.WalkDir(fsys, ".", func(rel string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := fs.ReadFile(fsys, rel)
			out[rel] = &fstest.MapFile{Data: b}
		}
		return nil
	})
	for _, c := range p.Changes {
		if c.Delete {
			delete(out, c.Path)
		} else {
			out[c.Path] = &fstest.MapFile{Data: c.Data}
		}
	}
	return out
}

// referenceTop ranks memory files the way viral-git-agent-memory's
// load_top_memories means to: pinned ("## Pinned" anywhere) first, then
// the "used," lines of the "## Access log" section only, most first;
// contradicted memories sink out (the reference's README: "Mark as
// contradicted (sinks in ranking)"). Re-stated here from its source so the
// test compares against the reference's rule, not ours.
func referenceTop(t *testing.T, fsys fs.FS, dirs ...string) []string {
	t.Helper()
	type row struct {
		name   string
		pinned bool
		uses   int
	}
	next := regexp.MustCompile(`\n## `)
	var rows []row
	for _, d := range dirs {
		ents, _ := fs.ReadDir(fsys, d)
		for _, e := range ents {
			if !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			b, _ := fs.ReadFile(fsys, d+"/"+e.Name())
			s := string(b)
			if strings.Contains(s, "## Contradicted") {
				continue
			}
			n := 0
			if i := strings.Index(s, "## Access log"); i >= 0 {
				sec := s[i+len("## Access log"):]
				if j := next.FindStringIndex(sec); j != nil {
					sec = sec[:j[0]]
				}
				for _, l := range strings.Split(sec, "\n") {
					if strings.HasPrefix(strings.TrimSpace(l), "used,") {
						n++
					}
				}
			}
			rows = append(rows, row{strings.ToLower(strings.ReplaceAll(strings.TrimSuffix(e.Name(), ".md"), "_", "-")), strings.Contains(s, "## Pinned"), n})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].pinned != rows[j].pinned {
			return rows[i].pinned
		}
		return rows[i].uses > rows[j].uses
	})
	var out []string
	for _, r := range rows {
		out = append(out, r.name)
	}
	return out
}

// TestViral: the fixture, written from the reference's source (its
// template, memory_hook's writers, the older lower-case folders), becomes
// a mindmount layout: every memory valid with a description from its
// title, contradicted and pinned ones marked, their text kept byte for
// byte after the frontmatter, and the index ranks the top memories as the
// reference ranked them.
func TestViral(t *testing.T) {
	src := os.DirFS("testdata/viral")
	if !LooksViral(src) {
		t.Fatal("the fixture is not recognised")
	}
	p, err := Viral(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"-SOUL.md", "-SOUL_memory/prefers-bullet-points.md", "-USER.md", "-USER_memory/Has_Dog_Pixel.md",
		"-USER_memory/likes-coffee.md", "-USER_memory/lives-in-berlin.md", "-USER_memory/peanut-allergy.md",
		"-USER_memory/works-as-engineer.md", "-user_memory.md",
		"character.md", "character_memory/prefers-bullet-points.md", "user.md",
		"user_memory/has-dog-pixel.md", "user_memory/likes-coffee.md", "user_memory/lives-in-berlin.md",
		"user_memory/moved-to-lisbon.md", "user_memory/peanut-allergy.md", "user_memory/works-as-engineer.md",
	}
	if got := p.sortedPaths(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	out := apply(t, src, p)
	if _, ok := out["CLAUDE.md"]; !ok {
		t.Fatal("a file the import does not know was removed")
	}
	var ms []*memgraph.Memory
	for rel, f := range out {
		if !strings.HasPrefix(rel, memgraph.UserDir+"/") && !strings.HasPrefix(rel, memgraph.CharacterDir+"/") {
			continue
		}
		m, probs := memgraph.Parse(rel, f.Data)
		if len(probs) > 0 || m.Front.Description == "" {
			t.Fatalf("%s: %v\n%s", rel, probs, f.Data)
		}
		if memgraph.KindOf(rel) == memgraph.KindUser {
			ms = append(ms, m)
		}
	}
	// Text kept: the file is the frontmatter, then the original bytes.
	orig, _ := fs.ReadFile(src, "USER_memory/lives-in-berlin.md")
	got := out["user_memory/lives-in-berlin.md"].Data
	if !bytes.HasSuffix(got, orig) || !bytes.HasPrefix(got, []byte("---\ndescription: Lives In Berlin\nstatus: contradicted\n---\n")) {
		t.Fatalf("contradicted memory:\n%s", got)
	}
	if got := string(out["user_memory/peanut-allergy.md"].Data); !strings.HasPrefix(got, "---\ndescription: Peanut Allergy\npinned: true\n---\n") {
		t.Fatalf("pinned memory:\n%s", got)
	}
	if got := out["user_memory/has-dog-pixel.md"].Data; !bytes.Contains(got, []byte("description: Has Dog Pixel")) {
		t.Fatalf("renamed memory:\n%s", got)
	}
	var rank []string
	for _, m := range memgraph.Rank(ms) {
		rank = append(rank, m.Slug())
	}
	ref := referenceTop(t, src, "USER_memory", "user_memory")
	if strings.Join(rank, " ") != strings.Join(ref, " ") || rank[0] != "peanut-allergy" {
		t.Fatalf("mindmount ranks %v, the reference %v", rank, ref)
	}
	// Imported, it is not recognised as the reference's any more.
	out[".mindmount/.gitkeep"] = &fstest.MapFile{}
	if LooksViral(out) {
		t.Fatal("an imported tree still looks like the reference's")
	}
}

// TestLooksViral: the reference's top-level names, or a memory without
// frontmatter in a memory folder, mark its repository; mindmount's own
// (with .mindmount/) and an empty folder are not.
func TestLooksViral(t *testing.T) {
	cases := map[string]struct {
		fsys fstest.MapFS
		want bool
	}{
		"SOUL.md":            {fstest.MapFS{"SOUL.md": {}}, true},
		"USER_memory":        {fstest.MapFS{"USER_memory/x.md": {}}, true},
		"old lower-case":     {fstest.MapFS{"user.md": {}, "user_memory/x.md": {Data: []byte("# X\n\n## Fact\nx\n")}}, true},
		"mindmount":          {fstest.MapFS{".mindmount/.gitkeep": {}, "user.md": {}, "USER.md": {}}, false},
		"before the rename":  {fstest.MapFS{memgraph.LegacyStateDir + "/cursor": {}, "user.md": {}, "user_memory/x.md": {Data: []byte("# X\n")}}, false},
		"mindmount memories": {fstest.MapFS{"user.md": {}, "user_memory/x.md": {Data: []byte("---\ndescription: x\n---\n")}}, false},
		"one invalid memory": {fstest.MapFS{"user.md": {}, "user_memory/a.md": {Data: []byte("---\ndescription: a\n---\n")}, "user_memory/b.md": {Data: []byte("# B\n")}}, false},
		"empty":              {fstest.MapFS{}, false},
	}
	for name, c := range cases {
		if got := LooksViral(c.fsys); got != c.want {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}

// TestViralRefusesLinks: a memory, SOUL.md or USER.md that is a symbolic
// link is refused (ErrSymlink), never read: an import never copies a file
// from outside the repository into it.
func TestViralRefusesLinks(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(secret, []byte("# Secret\n\n## Fact\nroot password\n"), 0o600)
	for _, link := range []string{"USER_memory/secret.md", "SOUL.md", "USER.md"} {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "USER_memory"), 0o755)
		os.WriteFile(filepath.Join(dir, "USER_memory", "ok.md"), []byte("# Ok\n\n## Fact\nfine\n"), 0o644)
		os.Symlink(secret, filepath.Join(dir, filepath.FromSlash(link)))
		root, err := os.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Viral(root.FS())
		root.Close()
		if !errors.Is(err, ErrSymlink) {
			t.Errorf("%s a link outside: err %v, want ErrSymlink", link, err)
		}
		for _, c := range p.Changes {
			if bytes.Contains(c.Data, []byte("root password")) {
				t.Fatalf("the link's target was imported: %s", c.Path)
			}
		}
	}
}

// FuzzConvertViral: any file becomes a memory with a description whose
// text after the frontmatter is the original, byte for byte.
func FuzzConvertViral(f *testing.F) {
	for _, s := range []string{"", "# T\n\n## Fact\nx\n", "## Pinned\ncritical\n", "---\n", "# \n", "## Contradicted\n", "\x00\xff"} {
		f.Add(s, "slug")
	}
	f.Fuzz(func(t *testing.T, text, slug string) {
		out, _ := convertViral("user_memory/x.md", slug, []byte(text))
		m, _ := memgraph.Parse("user_memory/x.md", out)
		if m.Front.Description == "" {
			t.Fatalf("no description:\n%q", out)
		}
		if !bytes.HasSuffix(out, []byte(text)) {
			t.Fatalf("text not kept:\n%q\n%q", text, out)
		}
	})
}
