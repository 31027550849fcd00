package consolidate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A memory folder that is a symbolic link to a folder outside the
// repository: every path through it is unusable, so the search for a free
// name used to find every name taken and loop for ever (ignoring SIGTERM).
// The run now refuses up front, says which folder and why, and writes
// nothing — neither in the repository nor through the link.
func TestRunRefusesLinkedMemoryFolder(t *testing.T) {
	for _, dir := range []string{"user_memory", "character_memory"} {
		t.Run(dir, func(t *testing.T) {
			e := newEnv(t, "ollama", nil)
			outside := t.TempDir()
			if err := os.RemoveAll(filepath.Join(e.dir, dir)); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(outside, filepath.Join(e.dir, dir)); err != nil {
				t.Fatal(err)
			}
			kind := "user"
			if dir == "character_memory" {
				kind = "character"
			}
			e.addTranscript("transcripts/s.jsonl", jsonl("I keep bees on my roof.", "Nice."))
			e.script([]Fact{{Kind: kind, Slug: "keeps-bees", Description: "Keeps bees", Fact: "You keep bees."}},
				[]Decision{{Fact: 0, Action: ActionAdd}})
			before := e.commits()
			var err error
			within(t, "a run with a linked "+dir, func() { _, err = e.c.Run(context.Background()) })
			if !errors.Is(err, ErrLinkedFolder) {
				t.Fatalf("run with %s a symbolic link: %v, want ErrLinkedFolder", dir, err)
			}
			if got := e.commits(); got != before {
				t.Fatalf("a refused run made %d commits", got-before)
			}
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Fatalf("the run wrote through the link: %v", ents)
			}
		})
	}
}
