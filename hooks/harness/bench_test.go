package harness

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCopyIncremental is one Stop hook late in a long session: the
// transcript is already about 20 MB (tool output included) and one turn
// was added since the last call. The cost follows the new lines, not the
// size of the transcript.
func BenchmarkCopyIncremental(b *testing.B) {
	mem := filepath.Join(b.TempDir(), "memory")
	os.MkdirAll(filepath.Join(mem, "transcripts"), 0o755)
	src := filepath.Join(b.TempDir(), "t.jsonl")
	var big bytes.Buffer
	blob := bytes.Repeat([]byte("x"), 4000)
	for big.Len() < 20<<20 {
		fmt.Fprintf(&big, `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"%s"}]}}`+"\n", blob)
		fmt.Fprintf(&big, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"turn %d"}]}}`+"\n", big.Len())
	}
	os.WriteFile(src, big.Bytes(), 0o644)
	o := CopyOptions{Memory: mem, Harness: ClaudeCode, SessionID: "bench", Source: src}
	if _, err := Copy(o); err != nil {
		b.Fatal(err)
	}
	f, _ := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
	defer f.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fmt.Fprintf(f, `{"type":"user","message":{"role":"user","content":"question %d"}}`+"\n", i)
		fmt.Fprintf(f, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"answer %d"}]}}`+"\n", i)
		if n, err := Copy(o); err != nil || n != 2 {
			b.Fatalf("copied %d, %v", n, err)
		}
	}
}
