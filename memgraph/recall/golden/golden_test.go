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

// TestReportMarksMissedGoals: every quality goal the goals line names is
// checked, each missed one marked in the text, and Pass fails with it (so
// mindmount eval exits 1); latency is printed, never a missed goal.
func TestReportMarksMissedGoals(t *testing.T) {
	good := Report{Golden: Metrics{At1: 0.95, At3: 0.97}, Latency: Latency{Queries: 10, P95: GoalP95 / 10}}
	for name, tc := range map[string]struct {
		r    Report
		miss string
	}{
		"met":      {good, ""},
		"recall@1": {Report{Golden: Metrics{At1: 0.5, At3: 0.97}, Latency: good.Latency}, "recall@1"},
		"retired":  {Report{Golden: good.Golden, Full: Metrics{Retired: 2}, Latency: good.Latency}, "retired"},
		// A slow query on a busy machine is no missed goal.
		"p95": {Report{Golden: good.Golden, Latency: Latency{Queries: 10, P95: 2 * GoalP95}}, ""},
	} {
		var b strings.Builder
		tc.r.WriteText(&b, false)
		ok, why := tc.r.Pass()
		if tc.miss == "" {
			if !ok || !strings.Contains(b.String(), "goals met") || strings.Contains(b.String(), "MISSED") {
				t.Errorf("%s: Pass %v %v\n%s", name, ok, why, b.String())
			}
			continue
		}
		if ok || !strings.Contains(strings.Join(why, ";"), tc.miss) || !strings.Contains(b.String(), "MISSED: ") {
			t.Errorf("%s: Pass %v %v, want a missed %s marked\n%s", name, ok, why, tc.miss, b.String())
		}
	}
}
