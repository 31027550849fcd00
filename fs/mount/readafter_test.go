package mount

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// Issue 16.1: without OPEN there is no RELEASE either, so a change made
// through the mount is noticed at WRITE, SETATTR or RENAME and folded into
// the graph before the next read of a synthesized file. Every index (both
// budgeted ones, the full listing, CONTEXT.md) follows an append, a new
// file written by a shell and an mv at once — not at close, not at the
// commit: the debounce is an hour and nothing is committed while the test
// looks.
func TestIndexesReadAfterWrite(t *testing.T) {
	for _, mode := range []struct {
		name string
		opt  Options
	}{{"no-open", Options{}}, {"open-each-file", Options{OpenEachFile: true}}} {
		t.Run(mode.name, func(t *testing.T) {
			const tea = "user_memory/likes-tea.md"
			tm := mountRepoDebounce(t, newRepo(t, map[string]string{
				tea: memoryFile("Likes Tea", "Drinks green tea every morning", "You drink green tea every morning.") + "\n## Access log\nused, 01.11.26\n",
			}), mode.opt, time.Hour)
			before := tm.commits()
			indexes := []string{"user_memory.md", ".mindmount/index/user_memory.md", "character_memory.md", ".mindmount/index/character_memory.md", "CONTEXT.md"}
			for _, rel := range indexes {
				tm.read(rel) // the kernel caches pages and sizes now
			}
			has := func(rel, want string) {
				t.Helper()
				if got := tm.read(rel); !strings.Contains(got, want) {
					t.Errorf("%s right after the change lacks %q:\n%s", rel, want, got)
				}
			}
			lacks := func(rel, bad string) {
				t.Helper()
				if got := tm.read(rel); strings.Contains(got, bad) {
					t.Errorf("%s right after the change still has %q:\n%s", rel, bad, got)
				}
			}
			// An agent stamps a use with >>: the use count moves at once.
			if err := appendLine(tm.p(tea), "used, 01.12.26"); err != nil {
				t.Fatal(err)
			}
			has("user_memory.md", "- user_memory/likes-tea.md — Drinks green tea every morning (uses: 2)")
			has(".mindmount/index/user_memory.md", "- user_memory/likes-tea.md — Drinks green tea every morning (uses: 2)")
			// A character memory written by a shell redirection.
			tm.sh(`printf -- '---\ndescription: Answers in German when asked in German\n---\n# German\n\n## Fact\nReply in German.\n' > character_memory/german.md`)
			has("character_memory.md", "- character_memory/german.md — Answers in German when asked in German (uses: 0)")
			has(".mindmount/index/character_memory.md", "- character_memory/german.md — ")
			has("CONTEXT.md", "Answers in German when asked in German")
			// mv: the old path leaves every index, the new one is there.
			tm.sh(`mv user_memory/likes-tea.md user_memory/drinks-tea.md`)
			for _, rel := range []string{"user_memory.md", ".mindmount/index/user_memory.md"} {
				has(rel, "- user_memory/drinks-tea.md — Drinks green tea every morning (uses: 2)")
				lacks(rel, "likes-tea")
			}
			// The size stat reports is the size read returns.
			for _, rel := range indexes {
				fi, err := os.Stat(tm.p(rel))
				if got := tm.read(rel); err != nil || int(fi.Size()) != len(got) {
					t.Errorf("stat %s: %v, size disagrees with its %d bytes", rel, err, len(got))
				}
			}
			if got := tm.commits(); got != before {
				t.Fatalf("%d commits while looking; the indexes must not wait for one", got-before)
			}
			// Then the hour-long burst is committed, and all of it.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := tm.tr.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if files := tm.git("ls-files", "user_memory", "character_memory"); !strings.Contains(files, "drinks-tea.md") || strings.Contains(files, "likes-tea.md") || !strings.Contains(files, "german.md") {
				t.Errorf("committed:\n%s", files)
			}
			tm.clean()
		})
	}
}
