package migrate

import (
	"os"
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
