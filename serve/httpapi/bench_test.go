package httpapi

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/consolidate"
	"github.com/mindmount/mindmount/consolidate/llm"
	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
)

// BenchmarkChat10k measures what mindmount adds to a chat request at 10,000
// memories: the model is the instant fake server, so
//
//	model    = the model call alone (provider.Stream to the fake)
//	chat     = POST /v1/chat end to end, streamed and read to [DONE]
//	prompt   = mindmount's own work per request in process (no HTTP, no model)
//	rescan   = the reference's approach, re-reading every memory file per
//	           request (memgraph.Scan + context + recall), without the model
//
// and reports p50/p95 per request in ms and requests per second. The added
// latency of mindmount is chat - model. Run with:
//
//	go test -run '^$' -bench Chat10k -benchtime 200x ./serve/httpapi
func BenchmarkChat10k(b *testing.B) {
	e := newBenchEnv(b, 10000)
	msgs := []llm.Message{{Role: "system", Content: "x"}, {Role: "user", Content: "hi"}}
	p := e.pool.Provider().(llm.Streamer)
	b.Run("model", func(b *testing.B) {
		measure(b, func() {
			if err := p.Stream(context.Background(), msgs, func(string) error { return nil }); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("chat", func(b *testing.B) {
		i := 0
		measure(b, func() {
			i++
			resp := e.do("POST", "/v1/chat", adminKey, fmt.Sprintf(`{"userId":"alice","message":"does the user like green tea or coffee %d?","sessionId":"b%d"}`, i, i%50))
			if body := readAll(resp); resp.StatusCode != 200 || !strings.HasSuffix(body, "data: [DONE]\n\n") {
				b.Fatalf("%d %s", resp.StatusCode, body)
			}
		})
	})
	b.Run("prompt", func(b *testing.B) {
		// mindmount's own work per chat request, in process: load the user,
		// write the user line, build the system prompt (CONTEXT.md and
		// recall over 10,000 memories), write the answer line.
		ctx := context.Background()
		i := 0
		measure(b, func() {
			i++
			rt, release, err := e.h.Acquire(ctx, "alice")
			if err != nil {
				b.Fatal(err)
			}
			rel := transcriptName(fmt.Sprint("p", i%50), time.Now())
			consolidate.AppendTranscriptNoSync(rt.Dir, rel, consolidate.Line{Role: consolidate.RoleUser, Content: "does the user like green tea?"})
			e.api.systemPrompt(ctx, rt.Graph, fmt.Sprintf("does the user like green tea or coffee %d?", i))
			consolidate.AppendTranscriptNoSync(rt.Dir, rel, consolidate.Line{Role: consolidate.RoleAssistant, Content: "Green tea, it seems."})
			release()
		})
	})
	dir := e.userPath("alice", "")
	b.Run("rescan", func(b *testing.B) {
		measure(b, func() {
			g, err := memgraph.Scan(dir)
			if err != nil {
				b.Fatal(err)
			}
			g.Context(memgraph.ContextOptions{})
			g.RecallContext(context.Background(), "does the user like green tea?", recall.Options{K: 5})
			g.RecallIndex().Close()
		})
	})
}

// measure runs fn b.N times and reports p50, p95 and requests per second.
func measure(b *testing.B, fn func()) {
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		fn()
		d = append(d, time.Since(t0))
	}
	total := time.Since(start)
	b.StopTimer()
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	ms := func(x time.Duration) float64 { return float64(x) / float64(time.Millisecond) }
	b.ReportMetric(ms(d[len(d)/2]), "p50-ms")
	b.ReportMetric(ms(d[len(d)*95/100]), "p95-ms")
	b.ReportMetric(float64(b.N)/total.Seconds(), "req/s")
}

// newBenchEnv is newEnv with n memories committed in alice's repository
// and an instant model answer.
func newBenchEnv(b *testing.B, n int) *env {
	root, err := os.MkdirTemp("", "mindmount-bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(root) })
	e := newEnvWith(b, root, "ollama", n, nil)
	e.model.Handle(func(llmtest.Call) llmtest.Reply { return llmtest.Reply{Content: "Green tea, it seems."} })
	return e
}

// writeMemories writes n memories into dir and commits them with git.
func writeMemories(tb testing.TB, dir string, n int) {
	words := []string{"tea", "coffee", "hiking", "chess", "python", "lisbon", "piano", "dogs", "cats", "running", "sushi", "jazz", "design", "garden", "cycling", "poetry"}
	for i := 0; i < n; i++ {
		w1, w2 := words[i%len(words)], words[(i/len(words))%len(words)]
		slug := fmt.Sprintf("m%05d-%s-%s", i, w1, w2)
		body := fmt.Sprintf("---\ndescription: Memory %d about %s and %s\n---\n# %s\n\n## Fact\nYou mentioned %s and %s on day %d.\n", i, w1, w2, slug, w1, w2, i)
		if err := os.WriteFile(filepath.Join(dir, "user_memory", slug+".md"), []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}
