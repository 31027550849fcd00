package golden

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/memgraph"
)

// The fixture is a conversation written for these tests in the shape of
// LoCoMo's JSON (the benchmark's own data is not redistributable).
const locomoFixture = "testdata/locomo-synthetic.json"

func loadFixture(t *testing.T) []LoCoMoSample {
	t.Helper()
	f, err := os.Open(locomoFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ParseLoCoMo(f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseLoCoMo(t *testing.T) {
	s := loadFixture(t)
	if len(s) != 1 || s[0].SpeakerA != "Ada" || s[0].SpeakerB != "Ben" || len(s[0].Sessions) != 2 {
		t.Fatalf("parsed %+v", s)
	}
	if s[0].Sessions[0].N != 1 || s[0].Sessions[1].N != 2 || len(s[0].Sessions[1].Turns) != 4 {
		t.Fatalf("sessions out of order or short: %+v", s[0].Sessions)
	}
	if _, err := ParseLoCoMo(strings.NewReader(`{"not": "an array"}`)); err == nil {
		t.Error("an object instead of an array parsed")
	}
}

// TestTurnMemory: a turn is a valid memory named after its id, holding the
// speaker, the text, the photo's caption and the session's date.
func TestTurnMemory(t *testing.T) {
	s := loadFixture(t)[0]
	rel, data, ok := TurnMemory(&s, &s.Sessions[0], &s.Sessions[0].Turns[2])
	if !ok || rel != "user_memory/d1-3.md" {
		t.Fatalf("path %q %v", rel, ok)
	}
	if probs := memgraph.Validate(rel, data, nil); len(probs) > 0 {
		t.Fatalf("invalid memory: %v\n%s", probs, data)
	}
	m, _ := memgraph.Parse(rel, data)
	for _, want := range []string{"Ada", "running shoes", "asleep on a pair", "3 March 2024", "session 1"} {
		if !strings.Contains(m.Title+"\n"+m.Front.Description+"\n"+m.Fact+"\n"+m.Episode, want) {
			t.Errorf("memory lacks %q:\n%s", want, data)
		}
	}
	if _, ok := TurnPath("D1:1/../x"); ok {
		t.Error("a turn id with a slash made a memory path")
	}
}

func TestLoCoMoScore(t *testing.T) {
	var s LoCoMoScore
	s.add([]int{0, 3}) // one of two evidence turns, third
	s.add([]int{1})    // the only one, first
	s.finish()
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if s.Questions != 2 || !near(s.MRR, (1.0/3+1)/2) || !near(s.R1, 0.5) || !near(s.R5, 0.75) || !near(s.R10, 0.75) || !near(s.AllAt10, 0.5) {
		t.Fatalf("%+v", s)
	}
}

// TestRunLoCoMo runs the fixture through real repositories: category 5 and
// questions whose evidence is not in the conversation are left out, an
// evidence entry listing two turns ("D1:2; D2:2") and the data's slip
// "D:1:1" count as turns, and recall finds what a keyword search must.
func TestRunLoCoMo(t *testing.T) {
	dir := t.TempDir()
	rep, err := RunLoCoMo(context.Background(), loadFixture(t), dir, LoCoMoConfig{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Conversations != 1 || rep.Turns != 8 || rep.Skipped != 1 || rep.Overall.Questions != 4 || rep.Latency.Queries != 4 {
		t.Fatalf("report %+v", rep)
	}
	for _, c := range LoCoMoCategories {
		if rep.ByCategory[c.N].Questions != 1 {
			t.Errorf("%s: %d questions, want 1", c.Name, rep.ByCategory[c.N].Questions)
		}
	}
	if s := rep.ByCategory[4]; s.MRR != 1 || s.R1 != 1 {
		t.Errorf("single-hop (the beagle puppy): %+v, want the turn first", s)
	}
	if s := rep.ByCategory[2]; s.MRR != 1 {
		t.Errorf("temporal (sailed across the lake): %+v, want the turn first", s)
	}
	if _, err := os.Stat(filepath.Join(dir, "0", "user_memory", "d2-4.md")); err != nil {
		t.Errorf("no memory file for turn D2:4: %v", err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	for _, want := range []string{"multi-hop", "temporal", "open-domain", "single-hop", "overall", "p95"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
