package consolidate

import (
	"reflect"
	"testing"
)

// TestCursorMerge is the rule the cursor merge driver and the floor share:
// per transcript the further position wins (positions only move
// forward), a transcript only the other side knows is taken, a tie in
// count keeps ours even when the hashes differ (the transcript was
// rewritten on one side), and Last is ours unless we have none.
func TestCursorMerge(t *testing.T) {
	e := func(n int, h string) CursorEntry { return CursorEntry{Messages: n, Hash: h} }
	ourRun := &LastRun{Message: "consolidate: ours", Files: []string{"user_memory/a.md"}}
	theirRun := &LastRun{Message: "consolidate: theirs", Files: []string{"user_memory/b.md"}}
	cases := []struct {
		name         string
		ours, theirs map[string]CursorEntry
		ourLast      *LastRun
		theirLast    *LastRun
		want         map[string]CursorEntry
		wantLast     *LastRun
	}{
		{
			name:   "theirs further: taken with its hash",
			ours:   map[string]CursorEntry{"transcripts/a.jsonl": e(3, "h3")},
			theirs: map[string]CursorEntry{"transcripts/a.jsonl": e(5, "h5")},
			want:   map[string]CursorEntry{"transcripts/a.jsonl": e(5, "h5")},
		},
		{
			name:   "ours further: kept",
			ours:   map[string]CursorEntry{"transcripts/a.jsonl": e(7, "h7")},
			theirs: map[string]CursorEntry{"transcripts/a.jsonl": e(5, "h5")},
			want:   map[string]CursorEntry{"transcripts/a.jsonl": e(7, "h7")},
		},
		{
			name:   "same count, different hash: ours",
			ours:   map[string]CursorEntry{"transcripts/a.jsonl": e(4, "ours")},
			theirs: map[string]CursorEntry{"transcripts/a.jsonl": e(4, "theirs")},
			want:   map[string]CursorEntry{"transcripts/a.jsonl": e(4, "ours")},
		},
		{
			name:   "a transcript only theirs knows: taken; one only ours knows: kept",
			ours:   map[string]CursorEntry{"transcripts/mine.md": e(2, "m")},
			theirs: map[string]CursorEntry{"transcripts/laptop.jsonl": e(9, "l")},
			want:   map[string]CursorEntry{"transcripts/mine.md": e(2, "m"), "transcripts/laptop.jsonl": e(9, "l")},
		},
		{
			name:      "Last: ours kept",
			ours:      map[string]CursorEntry{},
			theirs:    map[string]CursorEntry{},
			ourLast:   ourRun,
			theirLast: theirRun,
			want:      map[string]CursorEntry{},
			wantLast:  ourRun,
		},
		{
			name:      "Last: theirs when ours has none",
			ours:      map[string]CursorEntry{"transcripts/a.jsonl": e(1, "h1")},
			theirs:    map[string]CursorEntry{},
			theirLast: theirRun,
			want:      map[string]CursorEntry{"transcripts/a.jsonl": e(1, "h1")},
			wantLast:  theirRun,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Cursor{Version: 1, Transcripts: tc.ours, Last: tc.ourLast}
			o := &Cursor{Version: 1, Transcripts: tc.theirs, Last: tc.theirLast}
			before := o.Clone()
			c.Merge(o)
			if !reflect.DeepEqual(c.Transcripts, tc.want) {
				t.Errorf("positions %v, want %v", c.Transcripts, tc.want)
			}
			if !reflect.DeepEqual(c.Last, tc.wantLast) {
				t.Errorf("Last %+v, want %+v", c.Last, tc.wantLast)
			}
			if !reflect.DeepEqual(o.Transcripts, before.Transcripts) || !reflect.DeepEqual(o.Last, before.Last) {
				t.Errorf("Merge changed its argument: %+v", o)
			}
			// Never backwards: every position is at least both sides'.
			for rel, te := range before.Transcripts {
				if c.Transcripts[rel].Messages < te.Messages {
					t.Errorf("%s went back to %d (theirs at %d)", rel, c.Transcripts[rel].Messages, te.Messages)
				}
			}
		})
	}
}
