package tracker_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mindmount/mindmount/fs/tracker"
	"github.com/mindmount/mindmount/fs/tracker/conformance"
	"github.com/mindmount/mindmount/memgraph"
)

// TestSkillUsesKeptByTheTracker: the graph counts skill uses and writes no
// file; the tracker hands it the counts saved under .git (a served scan
// too, for the skills list's ranking) and saves new ones there.
func TestSkillUsesKeptByTheTracker(t *testing.T) {
	dir := conformance.NewRepo(t)
	file := filepath.Join(dir, ".git", filepath.FromSlash(memgraph.SkillUsesFile))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(`{"deploy":5,"../bad":9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := tracker.ScanServed(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.SkillUses(); got["deploy"] != 5 || len(got) != 1 {
		t.Fatalf("a served scan's counts: %v", got)
	}
	_, g, _ = open(t, dir, tracker.Config{})
	g.RecordSkillUse("skills/deploy/SKILL.md")
	if err := g.FlushSkillUses(); err != nil {
		t.Fatal(err)
	}
	if got := tracker.ReadSkillUses(filepath.Join(dir, ".git")); got["deploy"] != 6 {
		t.Fatalf("saved counts: %v, want deploy 6", got)
	}
	plain, err := memgraph.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.SkillUses(); len(got) != 0 {
		t.Fatalf("memgraph.Scan read the counts itself: %v", got)
	}
}
