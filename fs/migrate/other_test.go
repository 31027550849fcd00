package migrate

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mindmount/mindmount/memgraph"
)

// planned returns the plan's written files by path.
func planned(p Plan) map[string]string {
	out := map[string]string{}
	for _, c := range p.Changes {
		if !c.Delete {
			out[c.Path] = string(c.Data)
		}
	}
	return out
}

// valid parses every written file as mindmount would validate it.
func valid(t *testing.T, files map[string]string) {
	t.Helper()
	for rel, data := range files {
		m, probs := memgraph.Parse(rel, []byte(data))
		if len(probs) > 0 {
			t.Errorf("%s: %v\n%s", rel, probs, data)
		}
		if k := memgraph.KindOf(rel); (k == memgraph.KindUser || k == memgraph.KindCharacter) && m.Front.Description == "" {
			t.Errorf("%s: no description", rel)
		}
	}
}

// TestClaudeCode: the fixture, written from Claude Code's memory
// documentation (CLAUDE.md; auto memory in projects/<p>/memory/ with
// MEMORY.md and typed topic files), lands where each kind belongs.
func TestClaudeCode(t *testing.T) {
	p, err := ClaudeCode(os.DirFS("testdata/claude"), nil)
	if err != nil {
		t.Fatal(err)
	}
	files := planned(p)
	valid(t, files)
	ext := "claude-code/home-alice-src-shop/"
	want := map[string]string{
		"system/claude-code.md":                "Use pnpm, not npm.",
		"user_memory/user-role.md":             "new to React",
		"character_memory/feedback-testing.md": "**Why:** a mocked test passed",
		ext + "MEMORY.md":                      "[Release freeze](project_freeze.md)",
		ext + "project-freeze.md":              "No non-critical merges",
		ext + "reference-linear.md":            "INGEST",
	}
	if len(files) != len(want) {
		t.Fatalf("planned %v", p.Lines)
	}
	for rel, text := range want {
		if !strings.Contains(files[rel], text) {
			t.Errorf("%s lacks %q:\n%s", rel, text, files[rel])
		}
	}
	if got := files["user_memory/user-role.md"]; !strings.HasPrefix(got, "---\ndescription: Backend engineer, new to the React side of this repo\n") || !strings.Contains(got, "# User role\n") || !strings.Contains(got, "## Fact\n") {
		t.Errorf("user memory:\n%s", got)
	}
	if strings.Contains(files[ext+"project-freeze.md"], "type:") {
		t.Error("a key mindmount does not know was kept")
	}
	// An existing memory keeps its name; the import's gets another.
	p, _ = ClaudeCode(os.DirFS("testdata/claude"), func(rel string) bool { return rel == "user_memory/user-role.md" })
	if _, ok := planned(p)["user_memory/user-role-2.md"]; !ok {
		t.Fatalf("collision: %v", p.Lines)
	}
}

// TestLetta: the fixture, written from Letta's MemFS documentation
// (system/persona.md, system/human.md, other system/ blocks, reference/
// and skills/ read on demand), keeps its meaning: persona and human become
// character.md and user.md, system/ stays always in context, the rest is
// external memory; keys mindmount does not know are left out.
func TestLetta(t *testing.T) {
	p, err := Letta(os.DirFS("testdata/letta"), func(rel string) bool { return rel == "character.md" })
	if err != nil {
		t.Fatal(err)
	}
	files := planned(p)
	valid(t, files)
	want := map[string]string{
		"character.md":               "I am a Letta agent.",
		"user.md":                    "Name: Sam.",
		"system/workflow.md":         "draft pull request",
		"reference/project-notes.md": "through a queue",
		"skills/deploy/SKILL.md":     "make deploy",
	}
	if len(files) != len(want) {
		t.Fatalf("planned %v", p.Lines)
	}
	for rel, text := range want {
		if !strings.Contains(files[rel], text) {
			t.Errorf("%s lacks %q:\n%s", rel, text, files[rel])
		}
	}
	if got := files["character.md"]; !strings.HasPrefix(got, "---\ndescription: Who I am, what I value, and how I approach working with people.\n---\n") || strings.Contains(got, "limit") {
		t.Errorf("character.md:\n%s", got)
	}
	if !strings.Contains(strings.Join(p.Lines, "\n"), "limit left out") {
		t.Errorf("lines %v", p.Lines)
	}
	// Paths mindmount reserves go under letta/.
	p, _ = Letta(fstest.MapFS{"user_memory/x.md": {Data: []byte("---\ndescription: x\n---\nx\n")}, "CONTEXT.md": {Data: []byte("x\n")}}, nil)
	files = planned(p)
	if _, ok := files["letta/user_memory/x.md"]; !ok {
		t.Errorf("reserved paths: %v", p.Lines)
	}
	if _, ok := files["letta/CONTEXT.md"]; !ok {
		t.Errorf("reserved paths: %v", p.Lines)
	}
}

// FuzzFrontKeys: any input splits into keys and a body that is a suffix
// of it; without frontmatter the body is the input.
func FuzzFrontKeys(f *testing.F) {
	for _, s := range []string{"", "---\n", "---\na: b\n---\nbody", "---\r\nx: 'y'\r\n---\r\n", "no front"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		keys, body := frontKeys([]byte(s))
		if !strings.HasSuffix(s, string(body)) {
			t.Fatalf("body %q is not a suffix of %q", body, s)
		}
		if keys == nil && string(body) != s {
			t.Fatalf("no frontmatter, body %q", body)
		}
	})
}

// TestImportRefusesLinksAndControlNames: Claude Code's and Letta's imports
// refuse a markdown file that is a symbolic link (ErrSymlink; the link's
// target is never read) and a name with a control character
// (ErrControlName, the name shown escaped).
func TestImportRefusesLinksAndControlNames(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "bob.md")
	os.WriteFile(outside, []byte("---\ndescription: bob's\ntype: user\n---\nbob's private note\n"), 0o600)
	plan := map[string]func(fs.FS) (Plan, error){
		"claude": func(f fs.FS) (Plan, error) { return ClaudeCode(f, nil) },
		"letta":  func(f fs.FS) (Plan, error) { return Letta(f, nil) },
	}
	dirOf := map[string]string{"claude": "projects/p/memory", "letta": "notes"}
	for format, fn := range plan {
		for name, c := range map[string]struct {
			file string
			link bool
			want error
		}{
			"link":    {"stolen.md", true, ErrSymlink},
			"newline": {"a\nb.md", false, ErrControlName},
		} {
			dir := t.TempDir()
			sub := filepath.Join(dir, filepath.FromSlash(dirOf[format]))
			os.MkdirAll(sub, 0o755)
			if format == "claude" {
				os.WriteFile(filepath.Join(sub, "MEMORY.md"), []byte("- [x](x.md)\n"), 0o644)
			}
			if c.link {
				os.Symlink(outside, filepath.Join(sub, c.file))
			} else {
				os.WriteFile(filepath.Join(sub, c.file), []byte("---\ndescription: d\n---\ntext\n"), 0o644)
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			p, err := fn(root.FS())
			root.Close()
			if !errors.Is(err, c.want) {
				t.Errorf("%s %s: err %v, want %v", format, name, err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("%s %s: the error holds a raw newline: %q", format, name, err)
			}
			for _, ch := range p.Changes {
				if bytes.Contains(ch.Data, []byte("private note")) {
					t.Errorf("%s %s: the link's target was imported as %s", format, name, ch.Path)
				}
			}
		}
	}
}
