package host

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCheckUpgraded(t *testing.T) {
	tests := []struct {
		name  string
		setup func(dir string) error
		stale bool
	}{
		{"today's layout", func(dir string) error { return os.Mkdir(filepath.Join(dir, ".mindmount"), 0o755) }, false},
		{"nothing at all", func(string) error { return nil }, false},
		{"the old folder", func(dir string) error { return os.Mkdir(filepath.Join(dir, LegacyStateDir), 0o755) }, true},
		{"both", func(dir string) error {
			os.Mkdir(filepath.Join(dir, ".mindmount"), 0o755)
			return os.Mkdir(filepath.Join(dir, LegacyStateDir), 0o755)
		}, true},
		{"a link of the old name", func(dir string) error { return os.Symlink("/nowhere", filepath.Join(dir, LegacyStateDir)) }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tt.setup(dir); err != nil {
				t.Fatal(err)
			}
			err := CheckUpgraded(dir)
			if errors.Is(err, ErrNotUpgraded) != tt.stale {
				t.Fatalf("CheckUpgraded = %v, want stale %v", err, tt.stale)
			}
			if tt.stale && !strings.Contains(err.Error(), `"mindmount init `+dir+`"`) {
				t.Errorf("the error does not say how to fix it: %v", err)
			}
		})
	}
}

func TestRewriteLegacyRules(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"attributes of the old template",
			"# position, so \"git revert\" of a consolidation never replays it (see\n# \"engram help merge-cursor\"). Without the driver git merges it as text.\n.engram/cursor.json merge=engram-cursor\n*.md merge=engram-memory\n",
			"# position, so \"git revert\" of a consolidation never replays it (see\n# \"mindmount help merge-cursor\"). Without the driver git merges it as text.\n.mindmount/cursor.json merge=mindmount-cursor\n*.md merge=mindmount-memory\n"},
		{"ignore rules", "# engram: files synthesized by the daemon\n/.engram/status\n/.engram/search/\n.engram/cache/\n/.engram\n",
			"# mindmount: files synthesized by the daemon\n/.mindmount/status\n/.mindmount/search/\n.mindmount/cache/\n/.mindmount\n"},
		{"spacing and CRLF kept", "*.md\tmerge=engram-memory  diff\r\n", "*.md\tmerge=mindmount-memory  diff\r\n"},
		{"the user's own rules stay", "my.engram/x\nengrams/\n*.md merge=engram-custom-thing text\nnotes/.engramx\n",
			"my.engram/x\nengrams/\n*.md merge=mindmount-custom-thing text\nnotes/.engramx\n"},
		{"already upgraded", "/.mindmount/status\n*.md merge=mindmount-memory\n", "/.mindmount/status\n*.md merge=mindmount-memory\n"},
		{"no final newline", "/.engram/index/", "/.mindmount/index/"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rewriteLegacyRules([]byte(tt.in)); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			if again := rewriteLegacyRules([]byte(tt.want)); again != tt.want {
				t.Errorf("not idempotent: %q", again)
			}
		})
	}
}

func TestMoveStateConflicts(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(data), 0o644)
	}
	write(".engram/settings", "index_tokens: 1500\n")
	write(".engram/.gitkeep", "")
	write(".mindmount/.gitkeep", "")
	write(".mindmount/settings", "index_tokens: 3000\n")
	_, err := moveState(dir)
	if err == nil || !strings.Contains(err.Error(), "settings") {
		t.Fatalf("moveState with two different settings: %v", err)
	}
	// Nothing moved, nothing lost.
	for rel, want := range map[string]string{".engram/settings": "index_tokens: 1500\n", ".mindmount/settings": "index_tokens: 3000\n", ".engram/.gitkeep": ""} {
		if b, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v", rel, b, err)
		}
	}
	// Once the user keeps one, the rest moves and equal files merge.
	os.Remove(filepath.Join(dir, ".mindmount/settings"))
	if moved, err := moveState(dir); err != nil || !moved {
		t.Fatal(moved, err)
	}
	var got []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, rel)
		}
		return nil
	})
	if want := []string{".mindmount/.gitkeep", ".mindmount/settings"}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	// A link named like the old folder is never followed.
	os.Symlink("/etc", filepath.Join(dir, ".engram"))
	if _, err := moveState(dir); err == nil {
		t.Error("moveState followed a symbolic link")
	}
	os.Remove(filepath.Join(dir, ".engram"))
	if moved, err := moveState(dir); moved || err != nil {
		t.Errorf("moveState without the old folder: %v, %v", moved, err)
	}
}
