package memgraph

import (
	"strings"
	"testing"
)

func TestValidateMessages(t *testing.T) {
	big := "---\ndescription: big\n---\n" + strings.Repeat("x", MaxFileSize)
	cases := []struct {
		name, path, data, prev string
		want                   []string // substrings of the problems, in order; empty = valid
	}{
		{"valid", "user_memory/a.md", seed, "", nil},
		{"unknown key", "user_memory/a.md", "---\ndescription: d\ncolour: blue\n---\n",
			"", []string{"user_memory/a.md:3: unknown frontmatter key \"colour\"; allowed keys are description, status, supersedes, superseded_by, read_only, pinned, created, source, tags"}},
		{"missing description", "user_memory/a.md", "---\nstatus: active\n---\n# T\n", "", []string{"user_memory/a.md:1: missing description"}},
		{"empty description", "character_memory/a.md", "---\ndescription:\n---\n", "", []string{"character_memory/a.md:2: description is empty"}},
		{"blank description", "user_memory/a.md", "---\ndescription: \"  \"\n---\n", "", []string{":2: description is empty"}},
		{"no frontmatter in user memory", "user_memory/a.md", "# T\n", "", []string{"user_memory/a.md:1: missing frontmatter"}},
		{"no frontmatter in external is fine", "notes/a.md", "# T\n", "", nil},
		{"no frontmatter in user.md is fine", "user.md", "You are talking to Ada.\n", "", nil},
		{"bad status", "user_memory/a.md", "---\ndescription: d\nstatus: deleted\n---\n", "", []string{":3: status must be one of active, superseded, retracted, contradicted"}},
		{"link outside", "user_memory/a.md", "---\ndescription: d\nstatus: superseded\nsuperseded_by: ../../etc/passwd\n---\n", "", []string{"user_memory/a.md:4: superseded_by must name a memory inside the repository"}},
		{"link fine", "user_memory/a.md", "---\ndescription: d\nstatus: superseded\nsuperseded_by: user_memory/b\nsupersedes: user_memory/c.md\n---\n", "", nil},
		{"bad read_only", "user.md", "---\nread_only: maybe\n---\n", "", []string{":2: read_only must be true or false"}},
		{"unclosed", "user_memory/a.md", "---\ndescription: d\n# T\n", "", []string{":1: frontmatter starts with '---' on line 1 but is never closed"}},
		{"yaml error", "user_memory/a.md", "---\ndescription: d\ntags: [a\n---\n", "", []string{"user_memory/a.md:2: frontmatter is not valid YAML: did not find expected ',' or ']'"}},
		{"not a mapping", "notes/a.md", "---\n- a\n---\n", "", []string{":2: frontmatter must be a list of 'key: value' lines"}},
		{"duplicate key", "user_memory/a.md", "---\ndescription: a\ndescription: b\n---\n", "", []string{":3: frontmatter key \"description\" appears twice (first on line 2)"}},
		{"bad date", "user_memory/a.md", "---\ndescription: d\n---\n## Access log\nused, 2026-01-01\n", "", []string{"user_memory/a.md:5: this access log line has a bad date"}},
		{"NUL", "user_memory/a.md", "---\ndescription: d\n---\nab\x00c\n", "", []string{"user_memory/a.md:4: file contains a NUL byte at offset 25"}},
		{"not UTF-8", "notes/a.md", "ok\nbad \xff here\n", "", []string{"notes/a.md:2: file is not valid UTF-8 (first bad byte 0xff at offset 7)"}},
		{"too big", "notes/a.md", big, "", []string{"notes/a.md: file is 65561 bytes; memory files may be at most 65536 bytes (64 KiB)"}},
		{"read_only set on new file", "user.md", "---\nread_only: true\n---\n", "", []string{"user.md:2: a new file cannot be created with read_only: true"}},
		{"read_only false on new file is fine", "user.md", "---\nread_only: false\n---\n", "", nil},
		{"read_only added", "user.md", "---\nread_only: true\n---\nx\n", "---\n---\nx\n", []string{"user.md:2: read_only cannot be set, changed or removed by a write (last commit: not set)"}},
		{"read_only removed", "character.md", "---\ndescription: p\n---\nx\n", "---\ndescription: p\nread_only: true\n---\nx\n", []string{"character.md: file is read_only: true in the last commit"}},
		{"read_only file edited", "character.md", "---\nread_only: true\n---\ny\n", "---\nread_only: true\n---\nx\n", []string{"character.md:2: file is read_only: true in the last commit"}},
		{"read_only unchanged", "character.md", "---\nread_only: true\n---\nx\n", "---\nread_only: true\n---\nx\n", nil},
		{"read_only false to false with edit", "user.md", "---\nread_only: false\n---\ny\n", "---\nread_only: false\n---\nx\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var prev []byte
			if c.prev != "" {
				prev = []byte(c.prev)
			}
			probs := Validate(c.path, []byte(c.data), prev)
			if len(probs) != len(c.want) {
				t.Fatalf("got %d problems %v, want %d", len(probs), probs, len(c.want))
			}
			for i, p := range probs {
				if !strings.Contains(p.String(), c.want[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, p.String(), c.want[i])
				}
				if p.Path != c.path {
					t.Errorf("problem path %q", p.Path)
				}
			}
		})
	}
}

func TestPaths(t *testing.T) {
	cases := []struct {
		rel    string
		memory bool
		kind   Kind
		synth  bool
	}{
		{"user_memory/a.md", true, KindUser, false},
		{"character_memory/a.md", true, KindCharacter, false},
		{"character.md", true, KindBlock, false},
		{"user.md", true, KindBlock, false},
		{"system/tools/git.md", true, KindBlock, false},
		{"notes/a.md", true, KindExternal, false},
		{"README.md", true, KindExternal, false},
		{"user_memory.md", false, KindExternal, true},
		{"character_memory.md", false, KindExternal, true},
		{"CONTEXT.md", false, KindExternal, true},
		{".mindmount/status", false, KindExternal, true},
		{".mindmount/search/coffee", false, KindExternal, true},
		{".git/x.md", false, KindExternal, false},
		{".mindmount/notes.md", false, KindExternal, false},
		{"transcripts/s1.md", false, KindExternal, false},
		{"notes/.#a.md", false, KindExternal, false},
		{"notes/a.md~", false, KindExternal, false},
		{"notes/a.txt", false, KindExternal, false},
		{"../etc/a.md", false, KindExternal, false},
		{"/abs/a.md", false, KindExternal, false},
		{"a/../b.md", false, KindExternal, false},
	}
	for _, c := range cases {
		if got := IsMemoryPath(c.rel); got != c.memory {
			t.Errorf("IsMemoryPath(%q) = %v", c.rel, got)
		}
		if c.memory {
			if got := KindOf(c.rel); got != c.kind {
				t.Errorf("KindOf(%q) = %v", c.rel, got)
			}
		}
		if got := IsSynthesized(c.rel); got != c.synth {
			t.Errorf("IsSynthesized(%q) = %v", c.rel, got)
		}
	}
}
