package harness

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestProjectTeamSkills: a team's skills are linked as <team>-<name> beside
// the personal ones, mm-<team>-<name> when the user has a skill of that
// name; a skill no longer active loses its link; uninstalling a team
// removes exactly its links.
func TestProjectTeamSkills(t *testing.T) {
	home := t.TempDir()
	mem, ops := filepath.Join(home, "memory"), filepath.Join(home, "memory", "shared", "ops")
	for _, d := range []string{filepath.Join(mem, "skills", "deploy"), filepath.Join(ops, "skills", "deploy"), filepath.Join(ops, "skills", "review")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "SKILL.md"), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(home, ".claude", "skills")
	own := filepath.Join(dir, "ops-review")
	if err := os.MkdirAll(own, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ProjectSkills(dir, mem, []string{"deploy"}); err != nil {
		t.Fatal(err)
	}
	made, notes, err := ProjectTeamSkills(dir, []TeamSkills{{Team: "ops", Memory: ops, Names: []string{"deploy", "review"}}})
	if err != nil || len(made) != 2 || len(notes) != 1 {
		t.Fatalf("made %v notes %v err %v", made, notes, err)
	}
	links := func() map[string]string {
		out := map[string]string{}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			target, _ := os.Readlink(filepath.Join(dir, e.Name()))
			out[e.Name()] = target
		}
		return out
	}
	want := map[string]string{"deploy": filepath.Join(mem, "skills", "deploy"), "ops-deploy": filepath.Join(ops, "skills", "deploy"),
		"mm-ops-review": filepath.Join(ops, "skills", "review"), "ops-review": ""}
	if got := links(); !mapsEqual(got, want) {
		t.Fatalf("links %v, want %v", got, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "ops-deploy", "SKILL.md")); err != nil || string(b) != filepath.Join(ops, "skills", "deploy") {
		t.Fatalf("SKILL.md through the team's link: %q %v", b, err)
	}
	// review retired in the team: its link goes, the rest stays.
	if _, _, err := ProjectTeamSkills(dir, []TeamSkills{{Team: "ops", Memory: ops, Names: []string{"deploy"}}}); err != nil {
		t.Fatal(err)
	}
	delete(want, "mm-ops-review")
	if got := links(); !mapsEqual(got, want) {
		t.Fatalf("after review retired: %v, want %v", got, want)
	}
	removed, err := UnprojectSkills(dir, ops, home)
	if err != nil || !slices.Equal(removed, []string{filepath.Join(dir, "ops-deploy")}) {
		t.Fatalf("uninstall of the team: %v %v", removed, err)
	}
	delete(want, "ops-deploy")
	if got := links(); !mapsEqual(got, want) {
		t.Fatalf("after the team's uninstall: %v, want %v", got, want)
	}
	if fi, err := os.Stat(own); err != nil || !fi.IsDir() {
		t.Fatal("the user's own skill was touched")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
