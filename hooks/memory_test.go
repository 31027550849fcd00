package hooks

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/memgraph"
)

const baseMem = `---
description: Enjoys specialty coffee
status: active
---
# Likes Coffee

## Fact
You enjoy specialty coffee.

## Episode
Session 31.08.26.

## Access log
used, 31.08.26
`

func edit(s, old, new string) []byte { return []byte(strings.Replace(s, old, new, 1)) }

func TestMergeMemory(t *testing.T) {
	const rel = "user_memory/likes-coffee.md"
	cases := []struct {
		name          string
		ours, theirs  []byte
		want          []string // substrings of the merged file
		sibling       bool
		deleted       bool
		wantNotInData []string
	}{
		{
			name:   "access log lines from both sides, by date, once",
			ours:   edit(baseMem, "used, 31.08.26\n", "used, 31.08.26\nused, 05.09.26\nused, 02.09.26\n"),
			theirs: edit(baseMem, "used, 31.08.26\n", "used, 31.08.26\nused, 02.09.26\nused, 01.09.26\n"),
			want:   []string{"## Access log\nused, 31.08.26\nused, 01.09.26\nused, 02.09.26\nused, 05.09.26\n"},
		},
		{
			name:   "different sections change cleanly",
			ours:   edit(baseMem, "You enjoy specialty coffee.", "You enjoy specialty coffee, Ethiopian."),
			theirs: edit(baseMem, "Session 31.08.26.", "Session 31.08.26, at the roaster."),
			want:   []string{"Ethiopian.", "at the roaster."},
		},
		{
			name:   "frontmatter key and section change cleanly",
			ours:   edit(baseMem, "description: Enjoys specialty coffee", "description: Enjoys Ethiopian coffee"),
			theirs: edit(baseMem, "used, 31.08.26\n", "used, 31.08.26\nused, 02.09.26\n"),
			want:   []string{"description: Enjoys Ethiopian coffee", "used, 02.09.26"},
		},
		{
			name:          "same fact changed on both sides: theirs newer stays, ours retired",
			ours:          edit(baseMem, "You enjoy specialty coffee.", "You enjoy tea now.\n"),
			theirs:        edit(string(edit(baseMem, "You enjoy specialty coffee.", "You enjoy espresso.")), "used, 31.08.26\n", "used, 31.08.26\nused, 03.09.26\n"),
			want:          []string{"You enjoy espresso.", "used, 03.09.26"},
			sibling:       true,
			wantNotInData: []string{"<<<<<<<", "tea"},
		},
		{
			name:   "access log removed here, status changed there: the log's lines stay",
			ours:   edit(baseMem, "## Access log\nused, 31.08.26\n", ""),
			theirs: edit(string(edit(baseMem, "status: active", "status: retracted")), "used, 31.08.26\n", "used, 31.08.26\nused, 04.09.26\n"),
			want:   []string{"status: retracted", "## Access log\nused, 31.08.26\nused, 04.09.26\n"},
		},
		{
			name:   "access log removed there, fact changed here: the log's lines stay",
			ours:   edit(baseMem, "You enjoy specialty coffee.", "You enjoy espresso."),
			theirs: edit(baseMem, "## Access log\nused, 31.08.26\n", ""),
			want:   []string{"You enjoy espresso.", "## Access log\nused, 31.08.26\n"},
		},
		{
			name:   "deleted there, changed here: kept",
			ours:   edit(baseMem, "used, 31.08.26\n", "used, 31.08.26\nused, 02.09.26\n"),
			theirs: nil,
			want:   []string{"used, 02.09.26"},
		},
		{
			name:   "deleted here, changed there: kept",
			ours:   nil,
			theirs: edit(baseMem, "used, 31.08.26\n", "used, 31.08.26\nused, 03.09.26\n"),
			want:   []string{"used, 03.09.26", "You enjoy specialty coffee."},
		},
		{
			name:    "deleted here, unchanged there: deleted",
			ours:    nil,
			theirs:  []byte(baseMem),
			deleted: true,
		},
		{
			name:   "deleted here, fact changed there: kept",
			ours:   nil,
			theirs: edit(baseMem, "You enjoy specialty coffee.", "You enjoy espresso."),
			want:   []string{"You enjoy espresso."},
		},
		{
			name:    "deleted there, unchanged here: deleted",
			ours:    []byte(baseMem),
			theirs:  nil,
			deleted: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := mergeMemory(memoryMergeInput{Path: rel, Base: []byte(baseMem), Ours: tc.ours, Theirs: tc.theirs, TheirsNewer: true})
			if !tc.sibling {
				// Without a real conflict, which side is newer must not
				// matter.
				if older := mergeMemory(memoryMergeInput{Path: rel, Base: []byte(baseMem), Ours: tc.ours, Theirs: tc.theirs}); !bytes.Equal(older.Data, res.Data) || older.Deleted != res.Deleted {
					t.Fatalf("the result depends on which side is newer:\n%s\nvs\n%s", res.Data, older.Data)
				}
			}
			if res.Deleted != tc.deleted {
				t.Fatalf("deleted = %v", res.Deleted)
			}
			if tc.deleted {
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(string(res.Data), w) {
					t.Errorf("merged file lacks %q:\n%s", w, res.Data)
				}
			}
			for _, w := range tc.wantNotInData {
				if strings.Contains(string(res.Data), w) {
					t.Errorf("merged file has %q:\n%s", w, res.Data)
				}
			}
			if probs := memgraph.Validate(rel, res.Data, nil); len(probs) > 0 {
				t.Errorf("merged file invalid: %v\n%s", probs, res.Data)
			}
			if (res.Sibling != nil) != tc.sibling {
				t.Fatalf("sibling = %q", res.Sibling)
			}
			if !tc.sibling {
				return
			}
			if res.SiblingPath != "user_memory/likes-coffee-2.md" {
				t.Errorf("sibling path %q", res.SiblingPath)
			}
			m, probs := memgraph.Parse(res.SiblingPath, res.Sibling)
			if len(probs) > 0 || m.Front.Status != memgraph.StatusSuperseded || m.Front.SupersededBy != "user_memory/likes-coffee" {
				t.Errorf("sibling not retired: %v %+v\n%s", probs, m.Front, res.Sibling)
			}
			if !strings.Contains(string(res.Sibling), "tea now") {
				t.Errorf("sibling lost the other fact:\n%s", res.Sibling)
			}
		})
	}
}

func TestUnionAccessLogKeepsRepeats(t *testing.T) {
	o := "## Access log\nused, 02.09.26\nused, 02.09.26\n\n"
	th := "## Access log\nused, 02.09.26\nused, 01.09.26\n"
	got := UnionAccessLog(o, th)
	want := "## Access log\nused, 01.09.26\nused, 02.09.26\nused, 02.09.26\n\n"
	if got != want {
		t.Fatalf("got %q want %q", got, want)
	}
}

// FuzzMergeMemory: the merge never panics, never writes conflict markers
// that were not in an input, never loses an access log line of either
// side, and never turns valid inputs into an invalid memory.
func FuzzMergeMemory(f *testing.F) {
	f.Add([]byte(baseMem), edit(baseMem, "coffee.", "tea."), edit(baseMem, "coffee.", "mate."), true)
	f.Add([]byte(baseMem), edit(baseMem, "31.08.26\n", "31.08.26\nused, 01.09.26\n"), edit(baseMem, "status: active", "status: retracted"), false)
	f.Add([]byte(""), []byte("---\ndescription: x\n---\n"), []byte("---\ndescription: y\n---\n"), false)
	f.Fuzz(func(t *testing.T, base, ours, theirs []byte, newer bool) {
		const rel = "user_memory/fuzz.md"
		// A merge that hangs is a bug the fuzzer would otherwise only
		// report as "0 execs/sec": crash with the stacks instead.
		watchdog := time.AfterFunc(30*time.Second, func() { panic("MergeMemory did not return in 30s") })
		defer watchdog.Stop()
		res := mergeMemory(memoryMergeInput{Path: rel, Base: base, Ours: ours, Theirs: theirs, TheirsNewer: newer})
		if res.Deleted {
			return
		}
		for _, marker := range []string{"<<<<<<<", ">>>>>>>"} {
			if bytes.Contains(res.Data, []byte(marker)) && !bytes.Contains(ours, []byte(marker)) && !bytes.Contains(theirs, []byte(marker)) {
				t.Fatalf("conflict marker in result")
			}
		}
		valid := func(b []byte) bool { return len(memgraph.Validate(rel, b, nil)) == 0 }
		if valid(ours) && valid(theirs) {
			if !valid(res.Data) {
				t.Fatalf("valid inputs, invalid merge: %v\n%s", memgraph.Validate(rel, res.Data, nil), res.Data)
			}
			for _, side := range [][]byte{ours, theirs} {
				for _, l := range accessLines(rel, side) {
					if !strings.Contains(string(res.Data)+string(res.Sibling), l) {
						t.Fatalf("access log line %q lost:\n%s", l, res.Data)
					}
				}
			}
		}
	})
}

func accessLines(rel string, data []byte) []string {
	var out []string
	for _, s := range memgraph.SplitParts(rel, data).Sections {
		if s.Name != accessLogName {
			continue
		}
		_, body := cutHeading(s.Raw)
		for _, l := range strings.Split(body, "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "used,") {
				out = append(out, l)
			}
		}
	}
	return out
}

func FuzzUnionAccessLog(f *testing.F) {
	f.Add("## Access log\nused, 02.09.26\n", "## Access log\nused, 01.09.26\n")
	f.Add("## Access log\n", "")
	f.Fuzz(func(t *testing.T, o, th string) {
		got := UnionAccessLog(o, th)
		if !strings.HasPrefix(got, func() string { h, _ := cutHeading(o); return h }()) {
			t.Fatalf("heading lost")
		}
		// A real section starts with its heading line; a heading-less
		// "ours" gets its first line taken as the heading.
		if strings.HasPrefix(o, "## ") && UnionAccessLog(got, th) != got {
			t.Fatalf("not idempotent: %q", got)
		}
	})
}
