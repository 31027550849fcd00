package memgraph

import (
	"fmt"
	"strings"
	"testing"
)

// TestPinnedAlwaysInContext: a pinned memory's fact is in the compiled
// context whatever the budget and however rarely it is used, ahead of the
// character block and the lists, which share what it leaves.
func TestPinnedAlwaysInContext(t *testing.T) {
	files := map[string]string{
		"character.md": "# Character\n\n" + strings.Repeat("Be kind. ", 200) + "\n",
		"user.md":      "# User\n\nAda.\n",
		"user_memory/peanut-allergy.md": strings.Replace(mem("", "Peanut allergy", "", "You are severely allergic to peanuts."),
			"---\ndescription:", "---\npinned: true\ndescription:", 1),
		"character_memory/speak-slowly.md": mem("", "Speak slowly", "", "Speak slowly.\n\n## Pinned\n"),
	}
	for i := 0; i < 300; i++ {
		files[fmt.Sprintf("user_memory/m%03d.md", i)] = mem("", fmt.Sprintf("user fact number %d", i), "", "f", "01.01.26", "02.01.26", "03.01.26")
	}
	g, err := Scan(writeRepo(t, files))
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{1200, 4000, 32 << 10} {
		ctx := string(g.Context(ContextOptions{MaxBytes: max}))
		if len(ctx) > max {
			t.Errorf("budget %d: context is %d bytes", max, len(ctx))
		}
		allergy := strings.Index(ctx, "- user_memory/peanut-allergy.md — You are severely allergic to peanuts.\n")
		slowly := strings.Index(ctx, "- character_memory/speak-slowly.md — Speak slowly.\n")
		if allergy < 0 || slowly < 0 {
			t.Fatalf("budget %d: a pinned fact is missing:\n%s", max, ctx)
		}
		if ch := strings.Index(ctx, "Be kind."); ch >= 0 && ch < allergy {
			t.Errorf("budget %d: the character block comes before the pinned memories", max)
		}
		if ui := strings.Index(ctx, "## User memory"); ui >= 0 && ui < allergy {
			t.Errorf("budget %d: the user index comes before the pinned memories", max)
		}
	}
	// In the user index the pinned memory, never used, still ranks first.
	idx := string(g.Index(KindUser))
	if first := strings.Index(idx, "- user_memory/"); first < 0 || !strings.HasPrefix(idx[first:], "- user_memory/peanut-allergy.md") {
		t.Errorf("pinned memory not first in the index:\n%.300s", idx)
	}
	// Nothing pinned: no section.
	g2, err := Scan(writeRepo(t, map[string]string{"user_memory/a.md": mem("", "a", "", "f")}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(g2.Context(ContextOptions{})), "## Pinned") {
		t.Error("a context without pinned memories has a pinned section")
	}
}

// TestPinnedSectionReadsAsPinned: the reference's "## Pinned" section in an
// old file counts as pinned: true, the file renders back byte for byte,
// and SetPinned(false) does not unpin it (the section is the person's).
func TestPinnedSectionReadsAsPinned(t *testing.T) {
	for _, data := range []string{
		mem("", "Peanut allergy", "", "You are allergic to peanuts.") + "\n## Pinned\n",
		"---\ndescription: x\n---\n# X\n\n## Pinned\n\n## Fact\nf\n",
		"---\npinned: true\ndescription: x\n---\n# X\n",
		"---\ndescription: x\npinned: true # a comment\n---\n# X\n",
	} {
		m, probs := Parse("user_memory/x.md", []byte(data))
		if len(probs) > 0 {
			t.Fatalf("%q: %v", data, probs)
		}
		if !m.Front.Pinned {
			t.Errorf("%q: not pinned", data)
		}
		if string(m.Render()) != data {
			t.Errorf("round trip changed %q into %q", data, m.Render())
		}
		c := m.Clone()
		c.SetPinned(false)
		if c.Front.Pinned != strings.Contains(data, "## Pinned") {
			t.Errorf("%q: after SetPinned(false) pinned = %v", data, c.Front.Pinned)
		}
	}
	m, _ := Parse("user_memory/x.md", []byte(mem("", "x", "", "f")))
	m.SetPinned(true)
	if got := string(m.Render()); !strings.Contains(got, "pinned: true\n") {
		t.Errorf("SetPinned(true):\n%s", got)
	}
	again, probs := Parse("user_memory/x.md", m.Render())
	if len(probs) > 0 || !again.Front.Pinned {
		t.Errorf("pinned file re-read: %v %v", again.Front.Pinned, probs)
	}
}
