package hooks

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mindmount/mindmount/memgraph"
)

// TestMergeFileRules: which rule MergeFile chooses for each kind of path,
// and what it makes of a change on both sides.
func TestMergeFileRules(t *testing.T) {
	text := "one\ntwo\nthree\nfour\n"
	cur := func(n int) []byte {
		return []byte(`{"version":1,"transcripts":{"transcripts/s.jsonl":{"messages":` + string(rune('0'+n)) + `,"hash":"h"}}}`)
	}
	cases := []struct {
		name, path    string
		b, o, t       []byte
		rule          Rule
		conflict      bool
		want, notWant []string // substrings of the merged data
		sibling       bool
		deleted       bool
		lines         bool // the rule falls back to the line merge
	}{
		{name: "only theirs changed", path: "notes.txt", b: []byte(text), o: []byte(text), t: []byte("x\n"),
			rule: RuleOneSide, want: []string{"x\n"}},
		{name: "theirs deleted what ours kept", path: "notes.txt", b: []byte(text), o: []byte(text), t: nil,
			rule: RuleOneSide, deleted: true},
		{name: "ours deleted what theirs kept", path: "notes.txt", b: []byte(text), o: nil, t: []byte(text),
			rule: RuleOneSide, deleted: true},
		{name: "a deletion loses to a change", path: "notes.txt", b: []byte(text), o: nil, t: []byte("x\n"),
			rule: RuleOneSide, want: []string{"x\n"}},
		{name: "the same change on both sides", path: memgraph.CursorFile, b: cur(1), o: cur(2), t: cur(2),
			rule: RuleOneSide, want: []string{`"messages":2`}},
		{name: "cursor: the further position", path: memgraph.CursorFile, b: cur(1), o: cur(3), t: cur(2),
			rule: RuleCursor, want: []string{`"messages": 3`}},
		{name: "cursor that does not parse", path: memgraph.CursorFile, b: cur(1), o: cur(3), t: []byte("{"),
			rule: RuleCursor, conflict: true},
		{name: "memory: sections merge", path: "user_memory/likes-coffee.md", b: []byte(baseMem),
			o:    edit(baseMem, "You enjoy specialty coffee.", "You enjoy Ethiopian coffee."),
			t:    edit(baseMem, "used, 31.08.26\n", "used, 31.08.26\nused, 02.09.26\n"),
			rule: RuleMemory, want: []string{"Ethiopian", "used, 02.09.26"}},
		{name: "memory: a real conflict retires theirs beside", path: "user_memory/likes-coffee.md", b: []byte(baseMem),
			o:    edit(baseMem, "You enjoy specialty coffee.", "You enjoy tea."),
			t:    edit(baseMem, "You enjoy specialty coffee.", "You enjoy mate."),
			rule: RuleMemory, want: []string{"tea."}, notWant: []string{"<<<<<<<"}, sibling: true},
		{name: "skill: SKILL.md is a memory", path: "skills/brew/SKILL.md", b: []byte("a\n"), o: []byte("b\n"), t: []byte("c\n"),
			rule: RuleMemory, sibling: true}, // not valid memories: retired, never merged
		{name: "skill: its scripts merge by lines", path: "skills/brew/run.sh", b: []byte(text),
			o: []byte("ONE\ntwo\nthree\nfour\n"), t: []byte("one\ntwo\nthree\nFOUR\n"),
			rule: RuleLines, want: []string{"ONE\ntwo\nthree\nFOUR\n"}},
		{name: "settings merge by lines", path: memgraph.SettingsFile, b: []byte("index_tokens: 100\n# c\nlanguage: en\n"),
			o: []byte("index_tokens: 200\n# c\nlanguage: en\n"), t: []byte("index_tokens: 100\n# c\nlanguage: fr\n"),
			rule: RuleLines, want: []string{"index_tokens: 200\n# c\nlanguage: fr\n"}},
		{name: "settings: the same line changed twice", path: memgraph.SettingsFile, b: []byte("language: en\n"),
			o: []byte("language: de\n"), t: []byte("language: fr\n"),
			rule: RuleLines, conflict: true, want: []string{"<<<<<<< ours\nlanguage: de\n=======\nlanguage: fr\n>>>>>>> theirs\n"}},
		{name: "synthesized: ours, made up again", path: memgraph.ContextFile, b: []byte("a"), o: []byte("b"), t: []byte("c"),
			rule: RuleSynthesized, want: []string{"b"}},
		{name: "binary: a conflict", path: "image.png", b: []byte("a\x00"), o: []byte("b\x00"), t: []byte("c\x00"),
			rule: RuleBinary, conflict: true},
		{name: "transcript: both appends kept", path: "transcripts/s.jsonl", b: []byte("{1}\n"),
			o: []byte("{1}\n{o}\n"), t: []byte("{1}\n{t}\n"),
			rule: RuleAppend, want: []string{"{1}\n{o}\n{t}\n"}},
		{name: "transcript rewritten: lines", path: "transcripts/s.jsonl", b: []byte("{1}\n{2}\n"),
			o: []byte("{1}\n{2}\n{o}\n"), t: []byte("{T}\n{2}\n"),
			rule: RuleAppend, lines: true, want: []string{"{T}\n{2}\n{o}\n"}},
		{name: "text: both added at the end, one within the other", path: "notes.txt", b: []byte("a\n"),
			o: []byte("a\nb\n"), t: []byte("a\nb\nc\n"),
			rule: RuleLines, want: []string{"a\nb\nc\n"}},
		{name: "text: add/add with no base", path: "notes.txt", b: nil, o: []byte("a\n"), t: []byte("b\n"),
			rule: RuleLines, conflict: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := RuleFor(tc.path, tc.b, tc.o, tc.t); got != tc.rule {
				t.Fatalf("RuleFor = %s, want %s", got, tc.rule)
			}
			res, err := MergeFile(MergeInput{Path: tc.path, Base: tc.b, Ours: tc.o, Theirs: tc.t})
			var ce *ConflictError
			if got := errors.As(err, &ce); got != tc.conflict || tc.conflict && !errors.Is(err, ErrConflict) {
				t.Fatalf("err = %v, want a conflict: %v", err, tc.conflict)
			}
			applied := tc.rule
			if tc.lines {
				applied = RuleLines
			}
			if ce != nil && (ce.Rule != applied || ce.Path != tc.path) {
				t.Fatalf("conflict %+v, want rule %s on %s", ce, tc.rule, tc.path)
			}
			if res.Rule != applied || res.Deleted != tc.deleted || (res.Sibling != nil) != tc.sibling {
				t.Fatalf("rule %s deleted %v sibling %q, want %s %v %v", res.Rule, res.Deleted, res.SiblingPath, applied, tc.deleted, tc.sibling)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(res.Data), w) {
					t.Errorf("merged %q lacks %q", res.Data, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(string(res.Data), w) {
					t.Errorf("merged %q holds %q", res.Data, w)
				}
			}
		})
	}
}

// TestMergeLines: the line merge agrees with git merge-file on the cases
// that matter (checked by hand against git 2.x: "git merge-file -p").
func TestMergeLines(t *testing.T) {
	long := strings.Repeat("l\n", maxMergeLines)
	cases := []struct {
		b, o, t, want string
		ok            bool
	}{
		{"a\nb\nc\n", "A\nb\nc\n", "a\nb\nC\n", "A\nb\nC\n", true},
		{"a\nb\nc\n", "a\nc\n", "a\nb\nc\nd\n", "a\nc\nd\n", true},
		{"a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n", "a\n<<<<<<< ours\nX\n=======\nY\n>>>>>>> theirs\nc\n", false},
		{"a\nb\nc\n", "a\nP\nX\nc\n", "a\nP\nY\nc\n", "a\nP\n<<<<<<< ours\nX\n=======\nY\n>>>>>>> theirs\nc\n", false},
		{"a", "b", "a", "b", true},
		{"", "", "x\n", "x\n", true},
		{"a\n", "a\nx", "a\ny", "a\n<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n", false},
		// Longer than maxMergeLines: one conflict, the whole file, undiffed.
		{long, "x\n" + long, long + "y\n", "<<<<<<< ours\nx\n" + long + "=======\n" + long + "y\n>>>>>>> theirs\n", false},
	}
	for _, tc := range cases {
		got, ok := mergeLines([]byte(tc.b), []byte(tc.o), []byte(tc.t))
		if string(got) != tc.want || ok != tc.ok {
			t.Errorf("mergeLines(%q, %q, %q) = %q %v, want %q %v", tc.b, tc.o, tc.t, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzMergeFile: for every kind of path MergeFile never panics nor hangs;
// merging x with itself gives x; a clean line merge takes a side's lines
// where the other kept the base; a memory merge keeps every line both
// sides hold (in the merged file or the retired sibling).
func FuzzMergeFile(f *testing.F) {
	f.Add(uint8(0), []byte(baseMem), edit(baseMem, "coffee.", "tea."), edit(baseMem, "coffee.", "mate."), true)
	f.Add(uint8(1), []byte("a\nb\nc\n"), []byte("a\nB\nc\n"), []byte("a\nb\nC\n"), false)
	f.Add(uint8(2), []byte(`{"version":1}`), []byte(`{"transcripts":{"x":{"messages":2}}}`), []byte("{"), false)
	f.Add(uint8(3), []byte("{1}\n"), []byte("{1}\n{2}\n"), []byte("{1}\n{3}\n"), false)
	f.Add(uint8(4), []byte("a\x00"), []byte("b"), []byte("c"), false)
	paths := []string{"user_memory/fuzz.md", "notes/plain.txt", memgraph.CursorFile, "transcripts/s.jsonl", "skills/x/run.sh", memgraph.SettingsFile, memgraph.ContextFile}
	f.Add(uint8(0x20), []byte(baseMem), []byte(baseMem), []byte(baseMem), false)
	f.Fuzz(func(t *testing.T, which uint8, base, ours, theirs []byte, newer bool) {
		p := paths[int(which&0x0f)%len(paths)]
		watchdog := time.AfterFunc(30*time.Second, func() { panic("MergeFile did not return in 30s") })
		defer watchdog.Stop()
		for _, x := range [][]byte{base, ours, theirs} {
			for _, b := range [][]byte{base, x} {
				res, err := MergeFile(MergeInput{Path: p, Base: b, Ours: x, Theirs: x, TheirsNewer: newer})
				if err != nil || !bytes.Equal(res.Data, x) || res.Sibling != nil {
					t.Fatalf("%s: merging x with itself over %q: %q %v, want x = %q", p, b, res.Data, err, x)
				}
			}
		}
		// which's high bits make sides missing files.
		for i, side := range []*[]byte{&base, &ours, &theirs} {
			if which&(0x10<<i) != 0 {
				*side = nil
			}
		}
		res, err := MergeFile(MergeInput{Path: p, Base: base, Ours: ours, Theirs: theirs, TheirsNewer: newer})
		if same(base, ours) && (err != nil || res.Deleted != (theirs == nil) || !bytes.Equal(res.Data, theirs)) {
			t.Fatalf("%s: only theirs changed, but the merge is %q deleted %v, %v", p, res.Data, res.Deleted, err)
		}
		if same(base, theirs) && (err != nil || res.Deleted != (ours == nil) || !bytes.Equal(res.Data, ours)) {
			t.Fatalf("%s: only ours changed, but the merge is %q deleted %v, %v", p, res.Data, res.Deleted, err)
		}
		if res.Rule == RuleMemory {
			both := lineSet(ours)
			for l := range lineSet(theirs) {
				if both[l] && !bytes.Contains(res.Data, []byte(l)) && !bytes.Contains(res.Sibling, []byte(l)) && !isStatusLine(l) {
					t.Fatalf("memory merge lost %q, a line of both sides:\n%s\n--- sibling\n%s", l, res.Data, res.Sibling)
				}
			}
		}
		if res.Rule == RuleLines && err == nil {
			if got, _ := mergeLines(base, res.Data, res.Data); !bytes.Equal(got, res.Data) {
				t.Fatalf("a clean merge is not stable: %q then %q", res.Data, got)
			}
		}
	})
}

// lineSet is the set of data's non-blank lines, trimmed.
func lineSet(data []byte) map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			m[l] = true
		}
	}
	return m
}

// isStatusLine: the retired sibling's status and superseded_by keys are
// rewritten (that is what retiring it means).
func isStatusLine(l string) bool {
	return strings.HasPrefix(l, "status:") || strings.HasPrefix(l, "superseded_by:")
}

// TestDriverLineMerge: a file that reaches git's driver but is no memory
// (an .md under a dot folder) merges by lines in process: clean, ours
// gets the merge; a conflict leaves git's markers in ours and says so.
func TestDriverLineMerge(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const rel = ".notes/plan.md"
	b, o, th := write("b", "a\nb\nc\n"), write("o", "A\nb\nc\n"), write("t", "a\nb\nC\n")
	if err := MemoryDriver(b, o, th, rel, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(o); string(got) != "A\nb\nC\n" {
		t.Fatalf("clean merge wrote %q", got)
	}
	o, th = write("o", "a\nX\nc\n"), write("t", "a\nY\nc\n")
	if err := MemoryDriver(b, o, th, rel, io.Discard); !errors.Is(err, ErrConflict) {
		t.Fatalf("conflict: %v, want ErrConflict", err)
	}
	if got, _ := os.ReadFile(o); string(got) != "a\n<<<<<<< ours\nX\n=======\nY\n>>>>>>> theirs\nc\n" {
		t.Fatalf("conflict wrote %q", got)
	}
}
