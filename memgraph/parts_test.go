package memgraph

import (
	"bytes"
	"testing"
)

func FuzzSplitParts(f *testing.F) {
	f.Add([]byte("---\ndescription: x\n# c\ntags:\n  - a\n---\n# T\n\n## Fact\nf\n\n## Access log\nused, 01.09.26\n"))
	f.Add([]byte("---\nnot closed\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got := SplitParts("user_memory/x.md", data).Join(); !bytes.Equal(got, data) {
			t.Fatalf("Join(SplitParts(x)) = %q, want %q", got, data)
		}
	})
}
