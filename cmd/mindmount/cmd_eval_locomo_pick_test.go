package main

import (
	"errors"
	"slices"
	"testing"

	"github.com/mindmount/mindmount/memgraph/recall/golden"
)

func samplesN(n int) []golden.LoCoMoSample {
	out := make([]golden.LoCoMoSample, n)
	for i := range out {
		out[i].ID = string(rune('a' + i))
	}
	return out
}

func ids(s []golden.LoCoMoSample) []string {
	var out []string
	for _, x := range s {
		out = append(out, x.ID)
	}
	return out
}

// TestPickConversations: --conversations keeps the listed positions once
// each, in the order given; anything else is a usage error.
func TestPickConversations(t *testing.T) {
	for _, tc := range []struct {
		list string
		want []string // nil: a usage error
	}{
		{"", []string{"a", "b", "c", "d", "e"}},
		{"0,1,2", []string{"a", "b", "c"}},
		{" 3 , 4", []string{"d", "e"}},
		{"4,4,0", []string{"e", "a"}},
		{"5", nil},
		{"-1", nil},
		{"1,,2", nil},
		{"one", nil},
	} {
		got, err := pickConversations(samplesN(5), tc.list)
		if tc.want == nil {
			var u usageError
			if !errors.As(err, &u) {
				t.Errorf("%q: got %v, %v; want a usage error", tc.list, ids(got), err)
			}
			continue
		}
		if err != nil || !slices.Equal(ids(got), tc.want) {
			t.Errorf("%q: got %v, %v; want %v", tc.list, ids(got), err, tc.want)
		}
	}
}

func FuzzPickConversations(f *testing.F) {
	for _, s := range []string{"", "0,1,2", "3,4", "9", "a,1", ",", " 2 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		got, err := pickConversations(samplesN(5), list)
		if err != nil {
			return
		}
		if len(got) == 0 || len(got) > 5 {
			t.Fatalf("%q: %d conversations", list, len(got))
		}
	})
}
