package consolidate

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/mindmount/mindmount/fs/tracker"
)

// TestCandidatesAllMatchesOneByOne: the parallel candidate search offers
// exactly what one search per fact does, in the same order (run it with
// -race: the searches share the graph's recall index).
func TestCandidatesAllMatchesOneByOne(t *testing.T) {
	_, r, g := benchRepo(t, 300)
	c := New(tracker.New(g, r, tracker.Config{Logger: quietLogger()}), fakeProvider{}, Config{Logger: quietLogger(), Now: func() time.Time { return testNow }})
	facts := make([]Fact, 40)
	for i := range facts {
		facts[i] = Fact{Kind: "user", Description: "Enjoys " + word(i*7%300) + " gardening", Fact: fmt.Sprintf("You enjoy %s gardening.", word(i*7%300))}
		if i%3 == 0 {
			facts[i].Search = []string{word(i)}
		}
	}
	d, err := c.newDream(0)
	if err != nil {
		t.Fatal(err)
	}
	run := func() *chunkRun {
		return &chunkRun{c: c, d: d, src: "transcripts/t.jsonl#1", now: testNow, snap: map[string][]byte{}, head: map[string][]byte{}}
	}
	all := run().candidatesAll(context.Background(), facts)
	one := run()
	offered := 0
	for i, f := range facts {
		want := one.candidates(context.Background(), f)
		if !reflect.DeepEqual(paths(all[i]), paths(want)) {
			t.Fatalf("fact %d: candidatesAll offers %v, one search offers %v", i, paths(all[i]), paths(want))
		}
		offered += len(want)
	}
	if offered == 0 {
		t.Fatal("no candidate offered at all: the comparison proves nothing")
	}
}

func paths(cs []candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path + " (" + c.Why + ")"
	}
	return out
}
