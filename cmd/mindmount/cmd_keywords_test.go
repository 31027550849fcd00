package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/consolidate/llmtest"
)

// TestConsolidatedKeywordsRecall (issue 27): consolidation stores the
// keywords extraction produced as the memory's keywords: frontmatter, and
// the mount's .mindmount/search/<word> finds the memory by one of them
// that is in neither its title nor its text ("what does the user eat"
// finds "Loves a rare steak").
func TestConsolidatedKeywordsRecall(t *testing.T) {
	requireFUSE(t)
	requireGitCLI(t)
	srv := llmtest.New(t)
	srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: llmtest.JSON(map[string]any{"facts": []consolidate.Fact{{
		Kind: "user", Slug: "loves-rare-steak", Description: "Loves a rare steak", Fact: "You love a rare steak.",
		Keywords: []string{"food", "eat", "dinner"},
	}}})})
	srv.Queue(llmtest.KindDecide, llmtest.Reply{Content: `{"decisions":[{"fact":0,"action":"ADD","target":"","description":"","text":""}]}`})

	repo, mnt, cmd, logs := mountWithFakeModel(t, srv, "300ms")
	defer stopMindmount(t, cmd, logs)

	search := func(q string) string {
		b, err := os.ReadFile(filepath.Join(mnt, ".mindmount", "search", q))
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		return string(b)
	}
	if got := search("what does the user eat"); strings.Contains(got, "loves-rare-steak") {
		t.Fatalf("found before consolidation:\n%s", got)
	}
	if err := os.WriteFile(filepath.Join(mnt, "transcripts", "s1.jsonl"), []byte(`{"role":"user","content":"Nothing beats a rare steak."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mem := filepath.Join(mnt, "user_memory", "loves-rare-steak.md")
	waitFor(t, func() bool { _, err := os.Stat(mem); return err == nil }, "the consolidated memory")
	b, err := os.ReadFile(mem)
	if err != nil || !strings.Contains(string(b), "\nkeywords: [food, eat, dinner]\n") {
		t.Fatalf("memory (%v):\n%s", err, b)
	}
	for _, q := range []string{"what does the user eat", "dinner"} {
		waitFor(t, func() bool { return strings.Contains(search(q), "user_memory/loves-rare-steak.md") }, "search "+q+" finding the memory")
	}
	// The keywords are committed with the memory, not only in the mount.
	if show := gitOut(t, repo, "show", "HEAD:user_memory/loves-rare-steak.md"); !strings.Contains(show, "keywords: [food, eat, dinner]") {
		t.Errorf("committed memory:\n%s", show)
	}
}
