package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel+" "+d.Type().String())
		}
		return nil
	})
	return out
}

// For each harness, with a fresh home: install links the memory's active
// skills where the harness looks, SKILL.md readable through the link; a
// skill of the user's own of the same name stays and ours is linked as
// mm-<name>; uninstall leaves the home exactly as it was.
func TestProjectSkillsPerHarness(t *testing.T) {
	for _, h := range []string{ClaudeCode, Codex, GeminiCLI, OpenCode} {
		for _, scope := range []string{"user", "project"} {
			t.Run(h+"/"+scope, func(t *testing.T) {
				home, project, mem := t.TempDir(), t.TempDir(), t.TempDir()
				for _, n := range []string{"deploy", "review"} {
					p := filepath.Join(mem, "skills", n, "SKILL.md")
					os.MkdirAll(filepath.Dir(p), 0o755)
					os.WriteFile(p, []byte("---\nname: "+n+"\ndescription: d\n---\n"), 0o644)
				}
				dir, err := SkillsDir(h, scope, home, project)
				if err != nil {
					t.Fatal(err)
				}
				own := filepath.Join(dir, "review", "SKILL.md")
				os.MkdirAll(filepath.Dir(own), 0o755)
				os.WriteFile(own, []byte("mine"), 0o644)
				before := append(listing(t, home), listing(t, project)...)

				made, notes, err := ProjectSkills(dir, mem, []string{"deploy", "review"})
				if err != nil {
					t.Fatal(err)
				}
				if len(made) != 2 || len(notes) != 1 || !strings.Contains(notes[0], "linked as mm-review") {
					t.Fatalf("made %v notes %v", made, notes)
				}
				if b, err := os.ReadFile(filepath.Join(dir, "deploy", "SKILL.md")); err != nil || !strings.Contains(string(b), "name: deploy") {
					t.Errorf("SKILL.md through the link: %q %v", b, err)
				}
				if b, _ := os.ReadFile(filepath.Join(dir, "mm-review", "SKILL.md")); !strings.Contains(string(b), "name: review") {
					t.Errorf("mm-review: %q", b)
				}
				if b, _ := os.ReadFile(own); string(b) != "mine" {
					t.Error("the user's own skill changed")
				}
				// Again, with deploy no longer active: its link goes.
				if made, _, err := ProjectSkills(dir, mem, []string{"review"}); err != nil || len(made) != 1 {
					t.Fatalf("again: %v %v", made, err)
				}
				if _, err := os.Lstat(filepath.Join(dir, "deploy")); err == nil {
					t.Error("link to a skill no longer active kept")
				}
				if _, err := UnprojectSkills(dir, mem, map[string]string{"user": home, "project": project}[scope]); err != nil {
					t.Fatal(err)
				}
				if after := append(listing(t, home), listing(t, project)...); !slices.Equal(before, after) {
					t.Errorf("uninstall left\n%v\nwant\n%v", after, before)
				}
			})
		}
	}
}

// A folder that held nothing before is gone after uninstall.
func TestUnprojectRemovesWhatItMade(t *testing.T) {
	home, mem := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(mem, "skills", "a"), 0o755)
	dir, _ := SkillsDir(ClaudeCode, "user", home, "")
	if _, _, err := ProjectSkills(dir, mem, []string{"a"}); err != nil {
		t.Fatal(err)
	}
	if got, err := UnprojectSkills(dir, mem, home); err != nil || len(got) != 1 {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude")); err == nil {
		t.Error("empty folders kept")
	}
}

// With no active skill nothing is made, not even the folder.
func TestProjectNoSkills(t *testing.T) {
	home := t.TempDir()
	dir, _ := SkillsDir(Codex, "user", home, "")
	if made, _, err := ProjectSkills(dir, t.TempDir(), nil); err != nil || len(made) != 0 {
		t.Fatal(made, err)
	}
	if _, err := os.Stat(filepath.Join(home, ".agents")); err == nil {
		t.Error("folder made for no skill")
	}
}
