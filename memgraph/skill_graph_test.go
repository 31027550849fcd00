package memgraph

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// saveUsesIn saves skill use counts where the tracker does, for Scan to
// read them back.
func saveUsesIn(root string) func([]byte) error {
	return func(data []byte) error {
		p := filepath.Join(root, ".git", filepath.FromSlash(SkillUsesFile))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	}
}

// usesIn reads back what saveUsesIn saved.
func usesIn(t testing.TB, root string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, ".git", filepath.FromSlash(SkillUsesFile)))
	if err != nil {
		t.Fatal(err)
	}
	return ParseSkillUses(data)
}

// FuzzParseSkillUses: whatever the file holds, the counts are valid skill
// names with counts of zero or more.
func FuzzParseSkillUses(f *testing.F) {
	f.Add([]byte(`{"deploy":3,"../x":1,"neg":-2}`))
	f.Add([]byte(`not json`))
	f.Add([]byte(`{"a":1e30}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for k, v := range ParseSkillUses(data) {
			if !ValidSkillName(k) || v < 0 {
				t.Fatalf("%q: %d kept", k, v)
			}
		}
	})
}

func writeSkill(t testing.TB, root, name, desc, status string) {
	t.Helper()
	meta := ""
	if status != "" {
		meta = "metadata:\n  mindmount-status: " + status + "\n"
	}
	p := filepath.Join(root, "skills", name, "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("---\nname: "+name+"\ndescription: "+desc+"\n"+meta+"---\n# "+name+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Fifty skills of about 220 characters each do not fit the default 8,000
// characters: the most used are listed, a footer counts the rest and says
// how to list them all, and the uses live under .git, not in the skills.
func TestSkillsListBudget(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		writeSkill(t, root, fmt.Sprintf("skill-%02d", i), strings.Repeat("Does step "+strconv.Itoa(i)+" of a long procedure. ", 8), "")
	}
	writeSkill(t, root, "half-done", "a draft", "draft")
	g, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	g.KeepSkillUses(nil, saveUsesIn(root))
	before, _ := os.ReadFile(filepath.Join(root, "skills/skill-49/SKILL.md"))
	// skill-49 is read most, then skill-48, ... skill-40 least of these.
	for i := 40; i < 50; i++ {
		for n := 0; n < i; n++ {
			g.RecordSkillUse(fmt.Sprintf("skills/skill-%02d/SKILL.md", i))
		}
	}
	if err := g.FlushSkillUses(); err != nil {
		t.Fatal(err)
	}
	ctx := string(g.Context(ContextOptions{MaxBytes: 1 << 20}))
	_, sec, ok := strings.Cut(ctx, "\n## Skills\n")
	if !ok {
		t.Fatalf("no skills section:\n%s", ctx)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	list := sec[strings.Index(sec, "- "):]
	if len(list) > DefaultSkillListChars {
		t.Errorf("skills list is %d characters, budget %d", len(list), DefaultSkillListChars)
	}
	lines := strings.Split(strings.TrimSuffix(list, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "- skills/skill-49/SKILL.md — ") || !strings.HasPrefix(lines[9], "- skills/skill-40/SKILL.md — ") {
		t.Errorf("most used not first:\n%s", strings.Join(lines[:10], "\n"))
	}
	m := regexp.MustCompile(`^- … (\d+) more skills not shown; list them all with: mindmount skills list$`).FindStringSubmatch(lines[len(lines)-1])
	if m == nil {
		t.Fatalf("no footer: %q", lines[len(lines)-1])
	}
	if n, _ := strconv.Atoi(m[1]); n+len(lines)-1 != 50 || n == 0 {
		t.Errorf("footer counts %s, %d listed: want 50 in all", m[1], len(lines)-1)
	}
	if strings.Contains(ctx, "half-done") {
		t.Error("a draft skill is listed in the context")
	}
	after, _ := os.ReadFile(filepath.Join(root, "skills/skill-49/SKILL.md"))
	if string(before) != string(after) {
		t.Error("a use changed the skill's file")
	}
	if got := usesIn(t, root); got["skill-49"] != 49 || got["skill-40"] != 40 {
		t.Errorf("uses on disk: %v", got)
	}
}

func TestSkillsListFits(t *testing.T) {
	list := []SkillEntry{{Path: "skills/a/SKILL.md", Description: "A.", Status: SkillActive}, {Path: "skills/b/SKILL.md", Description: "B.", Status: SkillRetired}}
	if got := SkillsList(list, 0); got != "- skills/a/SKILL.md — A.\n" {
		t.Errorf("%q", got)
	}
	if got := SkillsList(list[1:], 0); got != "" {
		t.Errorf("retired listed: %q", got)
	}
}

// Uses are counted from many readers while the context is compiled.
func TestSkillUsesConcurrent(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, ".git"), 0o755)
	writeSkill(t, root, "a", "A.", "")
	g, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	g.KeepSkillUses(nil, saveUsesIn(root))
	done := make(chan struct{})
	for w := 0; w < 4; w++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 50; i++ {
				g.RecordSkillUse("skills/a/SKILL.md")
				g.Context(ContextOptions{})
			}
		}()
	}
	for w := 0; w < 4; w++ {
		<-done
	}
	if err := g.FlushSkillUses(); err != nil {
		t.Fatal(err)
	}
	if got := usesIn(t, root)["a"]; got != 200 {
		t.Errorf("uses %d, want 200", got)
	}
}
