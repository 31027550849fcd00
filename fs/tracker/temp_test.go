package tracker

import (
	"testing"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

func TestIsScratch(t *testing.T) {
	tests := []struct {
		rel  string
		want bool
	}{
		{"user_memory/.likes-tea.md.swp", true},
		{"user_memory/.likes-tea.md.swo", true},
		{"user_memory/.likes-tea.md.swx", true},
		{".swp", true},
		{"notes.swp", true},
		{"user_memory/4913", true},
		{"4913", true},
		{"5036", true}, // 4913+123: vim's second probe
		{"4914", false},
		{"04913", false},
		{"user_memory/likes-tea.md~", true},
		{"user_memory/.#likes-tea.md", true},
		{"user_memory/#likes-tea.md#", true},
		{"user_memory/sedAb12Cd", true},
		{"sedXXXXXX", true},
		{"sed12345", false},   // five characters: not mkostemp's template
		{"sed1234567", false}, // seven
		{"sed-12345", false},  // not alphanumeric
		{"sedation", false},   // 5 letters after sed
		{"transcripts/a.tmp", true},
		{"A.TMP", true},
		{".likes.md.tmp", true},
		{".tmp", true},
		{"user_memory/" + atomicfile.TempName("likes-tea.md"), true},
		{atomicfile.TempName("CONTEXT.md"), true},
		{".~lock.notes.odt#", true},
		{".goutputstream-XYZ123", true},
		// real files
		{"user_memory/likes-tea.md", false},
		{"character.md", false},
		{"user.md", false},
		{".gitignore", false},
		{"transcripts/s1.jsonl", false},
		{"notes/tmp/x.md", false},
		{"notes/temporary.md", false},
		{"swp.md", false},
		{"", false},
		{".", false},
	}
	for _, tt := range tests {
		if got := IsScratch(tt.rel); got != tt.want {
			t.Errorf("IsScratch(%q) = %v, want %v", tt.rel, got, tt.want)
		}
	}
}

func FuzzIsScratch(f *testing.F) {
	for _, s := range []string{"a/.b.swp", "4913", "sedAAAAAA", "x~", "", "/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = IsScratch(s) // must not panic on any input
	})
}
