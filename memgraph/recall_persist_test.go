package memgraph

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// savedGraph scans dir with the recall index saved at file, builds it and
// returns the graph.
func savedGraph(t *testing.T, dir, file string) *Graph {
	t.Helper()
	g, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	g.SetRecallFile(file)
	g.RecallIndex()
	t.Cleanup(g.Close)
	return g
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// TestRecallSavedIndex: the first build saves the index (0600, in the git
// directory); a start with the same memories loads it and writes nothing;
// a start after changes re-indexes them and saves again; every one answers
// as an index built fresh from the memories there are.
func TestRecallSavedIndex(t *testing.T) {
	dir := recallRepo(t)
	file := filepath.Join(dir, ".git", "mindmount", "recall.idx")
	os.MkdirAll(filepath.Dir(file), 0o755)
	g := savedGraph(t, dir, file)
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatalf("the built index was not saved: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("saved index mode %v, want 0600", fi.Mode().Perm())
	}
	sameRecall(t, g, freshRecall(g))
	ino := inode(t, file)

	g2 := savedGraph(t, dir, file)
	sameRecall(t, g2, freshRecall(g2))
	if inode(t, file) != ino {
		t.Fatal("a start with unchanged memories saved the index again")
	}

	changeRepo(t, g2, dir)
	g3 := savedGraph(t, dir, file)
	sameRecall(t, g3, freshRecall(g3))
	if inode(t, file) == ino {
		t.Fatal("a start after changes did not save the reconciled index")
	}
}

// TestRecallSavedIndexIgnoredWhenBad: a corrupt file, or one another user
// could have written (group or world writable), is never loaded: the
// index is built as without it.
func TestRecallSavedIndexIgnoredWhenBad(t *testing.T) {
	for _, tt := range []struct {
		name  string
		spoil func(t *testing.T, file string)
	}{
		{"flipped byte", func(t *testing.T, file string) {
			b, _ := os.ReadFile(file)
			b[len(b)/2] ^= 0x55
			os.WriteFile(file, b, 0o600)
		}},
		{"truncated", func(t *testing.T, file string) {
			b, _ := os.ReadFile(file)
			os.WriteFile(file, b[:len(b)/3], 0o600)
		}},
		{"writable by others", func(t *testing.T, file string) {
			// Anyone could have changed its terms (reconciling
			// compares documents, not terms): never loaded.
			os.Chmod(file, 0o666)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := recallRepo(t)
			file := filepath.Join(dir, ".git", "mindmount", "recall.idx")
			os.MkdirAll(filepath.Dir(file), 0o755)
			savedGraph(t, dir, file)
			tt.spoil(t, file)
			ino := inode(t, file)
			g := savedGraph(t, dir, file)
			sameRecall(t, g, freshRecall(g))
			// Built, not loaded: saved again, privately.
			if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 || inode(t, file) == ino {
				t.Fatalf("the refused file was not replaced by a fresh build: %v", err)
			}
		})
	}
}

// TestRecallSavedIndexHoldsOnlyMemories is the canary of the new file: it
// holds what the repository's memories say and nothing else of the work
// tree (a file that is not a memory, a block).
func TestRecallSavedIndexHoldsOnlyMemories(t *testing.T) {
	dir := recallRepo(t)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("canary-zebra-7731 not a memory\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "user.md"), []byte("---\ndescription: block\n---\n# User\n\ncanary-okapi-1189 in a block\n"), 0o644)
	file := filepath.Join(dir, ".git", "mindmount", "recall.idx")
	os.MkdirAll(filepath.Dir(file), 0o755)
	savedGraph(t, dir, file)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, canary := range []string{"canary-zebra-7731", "canary", "okapi"} {
		if bytes.Contains(b, []byte(canary)) {
			t.Fatalf("saved index holds %q, which no recalled memory says", canary)
		}
	}
	if !bytes.Contains(b, []byte("Pixel")) {
		t.Fatal("saved index does not hold the memories' text")
	}
}
