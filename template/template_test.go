package template

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/memgraph"
)

func TestPaths(t *testing.T) {
	want := []string{".gitattributes", ".gitignore", ".mindmount/.gitkeep", "README.md", "character.md", "character_memory/.gitkeep", "skills/README.md",
		"transcripts/.gitkeep", "user.md", "user_memory/.gitkeep"}
	if got := Paths(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Paths() = %q\nwant %q", got, want)
	}
}

func TestRenderUser(t *testing.T) {
	for _, tc := range []struct{ name, title, line string }{
		{"Ada", "# Ada\n", "The user's name is Ada."},
		{"  Ada\n Lovelace ", "# Ada Lovelace\n", "The user's name is Ada Lovelace."},
		{"", "# User\n", "The user's name is not known yet"},
	} {
		b, err := Render("user.md", tc.name)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if !strings.Contains(s, tc.title) || !strings.Contains(s, tc.line) || strings.Contains(s, "{{") {
			t.Errorf("Render(user.md, %q) =\n%s", tc.name, s)
		}
	}
}

// TestMemoriesValid: every markdown file of the template is a valid memory.
func TestMemoriesValid(t *testing.T) {
	for _, p := range Paths() {
		if !memgraph.IsMemoryPath(p) {
			continue
		}
		b, _ := Render(p, "Ada")
		// Validated as already committed (prev = itself): the template is
		// committed by "mindmount init", not written through the mount.
		if probs := memgraph.Validate(p, b, b); len(probs) > 0 {
			t.Errorf("%s: %v", p, probs)
		}
	}
	m, _ := memgraph.Parse("character.md", mustRender(t, "character.md"))
	if m == nil || !m.Front.ReadOnly || m.Front.Description == "" {
		t.Errorf("character.md must be read_only with a description: %+v", m)
	}
}

func mustRender(t *testing.T, p string) []byte {
	t.Helper()
	b, err := Render(p, "")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestWriteNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	created, err := Write(dir, "Ada", false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(created, Paths()) {
		t.Fatalf("first Write created %q", created)
	}
	// A user edit and a real memory survive a second Write, and a folder
	// with content gets no .gitkeep back.
	os.WriteFile(filepath.Join(dir, "user.md"), []byte("mine"), 0o644)
	os.Remove(filepath.Join(dir, "user_memory", ".gitkeep"))
	os.WriteFile(filepath.Join(dir, "user_memory", "x.md"), []byte("x"), 0o644)
	os.Remove(filepath.Join(dir, "README.md"))
	created, err = Write(dir, "Bob", false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(created, []string{"README.md"}) {
		t.Fatalf("second Write created %q, want only README.md", created)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "user.md")); string(b) != "mine" {
		t.Fatalf("user.md overwritten: %q", b)
	}
}

// TestGitignore checks the ignore patterns against names editors and tools
// really produce, and against memories that must never be ignored.
func TestGitignore(t *testing.T) {
	b, _ := Render(".gitignore", "")
	s := string(b)
	for _, want := range []string{"*.swp", "4913", "*~", ".#*", "sed??????", "*.tmp", "/CONTEXT.md", "/user_memory.md", "/character_memory.md", "/.mindmount/cache/", "/.mindmount/status", "/.mindmount/search/", "/.mindmount/index/", "/transcripts/*", "!/transcripts/.gitkeep"} {
		if !strings.Contains(s, "\n"+want+"\n") {
			t.Errorf(".gitignore lacks %q", want)
		}
	}
}

// TestGitignoreWithGit asks the real git which names the template ignores.
func TestGitignoreWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git CLI not installed")
	}
	dir := t.TempDir()
	if _, err := Write(dir, "", false); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("git", "-C", dir, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	for p, ignored := range map[string]bool{
		"user_memory/.likes-tea.md.swp": true, "user_memory/.likes-tea.md.swo": true, "user_memory/4913": true,
		"user_memory/likes-tea.md~": true, "user_memory/.#likes-tea.md": true, "user_memory/#likes-tea.md#": true,
		"user_memory/sedA1b2C3": true, "user_memory/x.md.tmp": true, "CONTEXT.md": true, "user_memory.md": true,
		"character_memory.md": true, ".mindmount/status": true, ".mindmount/cache/vectors.bin": true,
		".mindmount/search/coffee": true, ".mindmount/index/user_memory.md": true, ".mindmount/index/character_memory.md": true,
		"user_memory/likes-tea.md": false, "user_memory/sed-preferences.md": false, "user_memory/sedative.md": false,
		"user_memory/sedan-owner.md": false, "notes/CONTEXT.md": false, ".mindmount/cursor.json": false,
		"user_memory/4913.md": false,
		// transcripts/ is a local inbox, never committed (the transcripts rule)
		"transcripts/s1.jsonl": true, "transcripts/http/2026-12-01-a.jsonl": true, "transcripts/.gitkeep": false,
	} {
		err := exec.Command("git", "-C", dir, "check-ignore", "-q", "--no-index", p).Run()
		if got := err == nil; got != ignored {
			t.Errorf("git check-ignore %s = %v, want %v", p, got, ignored)
		}
	}
}

func TestCompleteIgnores(t *testing.T) {
	full, _ := Render(".gitignore", "")
	for _, tc := range []struct {
		name, have string
		want       []string
		wantTail   string
	}{
		{"all there", string(full), nil, ""},
		{"one missing", strings.Replace(string(full), "/.mindmount/index/\n", "", 1), []string{"/.mindmount/index/"}, "/.mindmount/index/\n"},
		{"no final newline, two missing", strings.TrimSuffix(strings.Replace(strings.Replace(string(full), "*.tmp\n", "", 1), "/CONTEXT.md\n", "", 1), "\n"), []string{"*.tmp", "/CONTEXT.md"}, "*.tmp\n/CONTEXT.md\n"},
		{"own file, indented rule counts", "  /CONTEXT.md\nmine/\n", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, ".gitignore")
			os.WriteFile(p, []byte(tc.have), 0o644)
			got, err := CompleteIgnores(dir)
			if err != nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(p)
			if tc.name == "own file, indented rule counts" {
				// Every other template rule is added; the one present is not.
				if slices.Contains(got, "/CONTEXT.md") || !slices.Contains(got, "/.mindmount/index/") {
					t.Fatalf("added %v", got)
				}
				return
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("added %v, want %v", got, tc.want)
			}
			if tc.want == nil {
				if string(after) != tc.have {
					t.Fatalf("file changed:\n%s", after)
				}
				return
			}
			if !strings.HasPrefix(string(after), tc.have) || !strings.HasSuffix(string(after), tc.wantTail) {
				t.Fatalf("file:\n%s", after)
			}
			if !strings.Contains(string(after), "\n!/transcripts/.gitkeep\n") {
				t.Fatalf("an added rule is glued to the last line:\n%s", after)
			}
		})
	}
	if got, err := CompleteIgnores(t.TempDir()); err != nil || got != nil {
		t.Fatalf("missing .gitignore: %v %v (Write creates it)", got, err)
	}
}
