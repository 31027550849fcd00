package hooks

import (
	"testing"

	"github.com/mindmount/mindmount/consolidate"
)

func TestMergeCursors(t *testing.T) {
	cur := func(entries map[string]int) []byte {
		c, _ := consolidate.ParseCursor(nil)
		for k, n := range entries {
			c.Transcripts[k] = consolidate.CursorEntry{Messages: n, Hash: "h" + k}
		}
		return c.Render()
	}
	cases := []struct {
		name               string
		base, ours, theirs map[string]int
		want               map[string]int
	}{
		// git revert X: base = after X, ours = HEAD, theirs = before X.
		{"revert keeps the advance", map[string]int{"a": 5}, map[string]int{"a": 9}, map[string]int{"a": 2}, map[string]int{"a": 9}},
		{"revert of the first run", map[string]int{"a": 5}, map[string]int{"a": 5}, map[string]int{}, map[string]int{"a": 5}},
		{"two machines", map[string]int{"a": 1}, map[string]int{"a": 3, "b": 1}, map[string]int{"a": 4, "c": 2}, map[string]int{"a": 4, "b": 1, "c": 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := mergeCursors(cur(tc.base), cur(tc.ours), cur(tc.theirs))
			if err != nil {
				t.Fatal(err)
			}
			c, err := consolidate.ParseCursor(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Transcripts) != len(tc.want) {
				t.Fatalf("got %+v", c.Transcripts)
			}
			for k, n := range tc.want {
				if c.Transcripts[k].Messages != n {
					t.Fatalf("%s: got %d want %d", k, c.Transcripts[k].Messages, n)
				}
			}
		})
	}
	if _, err := mergeCursors(nil, []byte("{"), nil); err == nil {
		t.Fatal("broken ours accepted")
	}
}
