package golden

import (
	"context"
	"errors"
	"hash/fnv"
	"os"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/memgraph/recall"
)

// TestGolden keeps the recall goals in CI: zero retired results, and
// recall@1 / recall@3 on the golden set at or above the goals.
// Latency is measured by BenchmarkSearch and `mindmount eval`, not asserted.
func TestGolden(t *testing.T) {
	s, err := Load(Embedded())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Docs) < 40 || len(s.Questions) < 30 || s.Retired() == 0 {
		t.Fatalf("golden set too small: %d memories (%d retired), %d questions", len(s.Docs), s.Retired(), len(s.Questions))
	}
	r := Run(s, Config{Total: 10000, Reps: 1})
	if testing.Verbose() {
		r.WriteText(os.Stdout, true)
	}
	if ok, why := r.Pass(); !ok {
		r.WriteText(os.Stderr, true)
		t.Fatalf("recall goals not met: %v", why)
	}
	if r.Full.Retired != 0 {
		t.Fatalf("%d retired memories returned at 10,000 memories", r.Full.Retired)
	}
}

func TestDistractorsDeterministic(t *testing.T) {
	a, b := Distractors(200, 7), Distractors(200, 7)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("distractor %d differs between runs", i)
		}
	}
}

// bowEmbedder is a deterministic bag-of-stems embedder: enough to run the
// fused path of the evaluation without a model.
type bowEmbedder struct{}

func (bowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 128)
		v[127] = 0.01
		for _, w := range recall.Terms(t) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%127]++
		}
		out[i] = v
	}
	return out, nil
}

type downEmbedder struct{}

func (downEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return nil, errors.New("connection refused")
}

func TestGoldenWithVectors(t *testing.T) {
	s, err := Load(Embedded())
	if err != nil {
		t.Fatal(err)
	}
	r := Run(s, Config{Total: 200, Reps: 1, Vectors: recall.NewVectors(bowEmbedder{}, "bow", t.TempDir())})
	if r.Fused == nil || r.VectorErr != nil {
		t.Fatalf("fused metrics missing: %v", r.VectorErr)
	}
	if r.Fused.Retired != 0 {
		t.Fatalf("%d retired memories returned with vectors", r.Fused.Retired)
	}
	var b strings.Builder
	r.WriteText(&b, false)
	if !strings.Contains(b.String(), "golden set + vectors") {
		t.Errorf("report lacks the fused line:\n%s", b.String())
	}

	r = Run(s, Config{Total: 200, Reps: 1, Vectors: recall.NewVectors(downEmbedder{}, "down", "")})
	if r.Fused != nil || r.VectorErr == nil {
		t.Fatalf("a failing model should leave no fused metrics")
	}
	if ok, why := r.Pass(); !ok {
		t.Fatalf("keyword goals should still pass: %v", why)
	}
}
