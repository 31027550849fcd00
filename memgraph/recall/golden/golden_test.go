package golden

import (
	"os"
	"testing"
)

// TestGolden keeps the recall goals in CI: zero retired results, and
// recall@1 / recall@3 on the golden set at or above the goals.
// Latency is measured by BenchmarkSearch and `engram eval`, not asserted.
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
