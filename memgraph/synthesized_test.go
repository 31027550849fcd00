package memgraph

import (
	"path"
	"strings"
	"testing"
)

// TestIsSynthesized is the one list of what the daemon makes up: the mount
// serves exactly these, the tracker never commits them, memory tools never
// write them. The consolidate control file is among them (the mount and
// memgraph once disagreed about it).
func TestIsSynthesized(t *testing.T) {
	tests := map[string]bool{
		"user_memory.md":                      true,
		"character_memory.md":                 true,
		"CONTEXT.md":                          true,
		".mindmount/status":                   true,
		".mindmount/consolidate":              true,
		".mindmount/search":                   true,
		".mindmount/search/green tea":         true,
		".mindmount/index":                    true,
		".mindmount/index/user_memory.md":     true,
		".mindmount/index/anything":           true,
		".mindmount/cursor.json":              false,
		".mindmount/cache/hooks/x":            false,
		"user_memory/likes-tea.md":            false,
		"notes/CONTEXT.md":                    false,
		"notes/user_memory.md":                false,
		".git":                                false,
		"":                                    false,
		".mindmount":                          false,
		".mindmount/statusx":                  false,
		"transcripts/http/2026-01-01-a.jsonl": false,
		".mindmount/consolidate/not-a-folder": false,
		".mindmount/search-not-the-folder/x":  false,
	}
	for rel, want := range tests {
		if got := IsSynthesized(rel); got != want {
			t.Errorf("IsSynthesized(%q) = %v, want %v", rel, got, want)
		}
	}
	// Every listed name is synthesized where it is listed, and the
	// constants name listed files.
	for dir, names := range synthesized {
		for _, n := range names {
			if rel := strings.TrimPrefix(path.Join(dir, n), "/"); !IsSynthesized(rel) {
				t.Errorf("%s is listed but not synthesized", rel)
			}
		}
	}
	for _, rel := range []string{StatusFile, SearchDir, IndexDir, ConsolidateFile, ContextFile} {
		if !IsSynthesized(rel) {
			t.Errorf("%s is not in the list", rel)
		}
	}
}
