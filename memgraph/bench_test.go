package memgraph

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// The benchmarks share one generated repository of 10,000 memory files:
// 6,000 user memories, 3,000 character memories (every 20th retired) and
// 1,000 external files in 20 folders, plus the blocks.

var (
	benchOnce sync.Once
	benchDir  string
	benchErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

func benchRepo(b *testing.B) string {
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "mindmount-bench-")
		if benchErr != nil {
			return
		}
		write := func(rel, data string) {
			p := filepath.Join(benchDir, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				benchErr = err
			}
			if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
				benchErr = err
			}
		}
		write("character.md", "---\ndescription: Base persona\nread_only: true\n---\n# Character\n\nYou are a warm, concise assistant.\n")
		write("user.md", "# User\n\nThe user is Ada, a software engineer in Lisbon.\n")
		write("system/tools.md", "Use grep to search memory.\n")
		for i := 0; i < 6000; i++ {
			write(fmt.Sprintf("user_memory/fact-%05d.md", i), benchMemory(i, ""))
		}
		for i := 0; i < 3000; i++ {
			status := ""
			if i%20 == 0 {
				status = "contradicted"
			}
			write(fmt.Sprintf("character_memory/adapt-%05d.md", i), benchMemory(i, status))
		}
		for i := 0; i < 1000; i++ {
			write(fmt.Sprintf("docs/area-%02d/doc-%04d.md", i%20, i), fmt.Sprintf("---\ndescription: Reference document %d about topic %d\n---\n# Doc %d\n\nBody text.\n", i, i%37, i))
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir
}

func benchMemory(i int, status string) string {
	uses := make([]string, i%7)
	for j := range uses {
		uses[j] = fmt.Sprintf("%02d.%02d.26", 1+(i+j)%28, 1+j%12)
	}
	return mem("", fmt.Sprintf("Fact number %d about the user's preferences and habits", i), status,
		fmt.Sprintf("The user mentioned preference %d during a long conversation about routines.", i), uses...)
}

func benchGraph(b *testing.B) *Graph {
	g, err := Scan(benchRepo(b))
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkScan10k builds the graph from 10,000 files on disk.
func BenchmarkScan10k(b *testing.B) {
	dir := benchRepo(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Scan(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdate10k re-reads one changed file from disk into a graph of
// 10,000 memories (the mount's path on every write).
func BenchmarkUpdate10k(b *testing.B) {
	g := benchGraph(b)
	rel := "user_memory/fact-00042.md"
	datas := [][]byte{[]byte(benchMemory(42, "")), []byte(benchMemory(43, ""))}
	p := filepath.Join(g.Root(), rel)
	i := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		i++
		if err := os.WriteFile(p, datas[i%2], 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := g.Update(rel); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPut10k is Update without the disk read.
func BenchmarkPut10k(b *testing.B) {
	g := benchGraph(b)
	rel := "user_memory/fact-00042.md"
	datas := [][]byte{[]byte(benchMemory(42, "")), []byte(benchMemory(43, ""))}
	i := 0
	for b.Loop() {
		i++
		g.Put(rel, datas[i%2])
	}
}

// BenchmarkIndexUser10k renders user_memory.md right after a change, so
// every iteration rebuilds it (no cache hit) from the current graph.
func BenchmarkIndexUser10k(b *testing.B) {
	benchRender(b, func(g *Graph) int { return len(g.Index(KindUser)) })
}

// BenchmarkContext10k compiles CONTEXT.md (default 32 KiB budget) right
// after a change, from the current graph.
func BenchmarkContext10k(b *testing.B) {
	benchRender(b, func(g *Graph) int { return len(g.Context(ContextOptions{})) })
}

// BenchmarkContextUnlimited10k compiles the whole context (~1.4 MB, no
// truncation) after a change.
func BenchmarkContextUnlimited10k(b *testing.B) {
	benchRender(b, func(g *Graph) int { return len(g.Context(ContextOptions{MaxBytes: 64 << 20})) })
}

// BenchmarkIndexCached10k reads the index when nothing changed.
func BenchmarkIndexCached10k(b *testing.B) {
	g := benchGraph(b)
	g.Index(KindUser)
	for b.Loop() {
		g.Index(KindUser)
	}
}

func benchRender(b *testing.B, render func(*Graph) int) {
	g := benchGraph(b)
	rel := "user_memory/fact-00042.md"
	datas := [][]byte{[]byte(benchMemory(42, "")), []byte(benchMemory(43, ""))}
	i, n := 0, 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		i++
		g.Put(rel, datas[i%2])
		b.StartTimer()
		n = render(g)
	}
	b.ReportMetric(float64(n), "bytes")
}

// BenchmarkParse parses one typical memory file.
func BenchmarkParse(b *testing.B) {
	data := []byte(benchMemory(42, ""))
	for b.Loop() {
		Parse("user_memory/fact-00042.md", data)
	}
}
