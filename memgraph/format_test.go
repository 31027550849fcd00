package memgraph

import (
	"strings"
	"testing"
	"time"
)

const seed = `---
description: Enjoys specialty coffee, especially Ethiopian single origin
status: active
---
# Likes Coffee

## Fact
You enjoy specialty coffee, especially Ethiopian single origin.

## Episode
Session 31.08.26 — you mentioned buying a bag from a local roaster.

## Access log
used, 31.08.26
used, 02.09.26
`

func TestParseSeed(t *testing.T) {
	m, probs := Parse("user_memory/likes-coffee.md", []byte(seed))
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	want := Memory{Path: "user_memory/likes-coffee.md", Title: "Likes Coffee",
		Fact:    "You enjoy specialty coffee, especially Ethiopian single origin.",
		Episode: "Session 31.08.26 — you mentioned buying a bag from a local roaster.",
		Uses:    2, LastUsed: time.Date(2026, 9, 2, 0, 0, 0, 0, time.UTC)}
	if m.Title != want.Title || m.Fact != want.Fact || m.Episode != want.Episode || m.Uses != want.Uses || !m.LastUsed.Equal(want.LastUsed) {
		t.Errorf("got %+v", m)
	}
	if m.Front.Description != "Enjoys specialty coffee, especially Ethiopian single origin" || m.Front.Status != StatusActive || !m.Active() {
		t.Errorf("front %+v", m.Front)
	}
	if got := string(m.Render()); got != seed {
		t.Errorf("render differs:\n%s", got)
	}
}

func TestRoundTrip(t *testing.T) {
	cases := map[string]string{
		"seed":                         seed,
		"empty":                        "",
		"no frontmatter":               "# Just a note\n\nSome text.\n",
		"crlf":                         "---\r\ndescription: x\r\n---\r\n# T\r\n\r\n## Fact\r\nf\r\n",
		"no final newline":             "---\ndescription: x\n---\n## Fact\nf",
		"comments and unknown section": "---\n# a comment\ndescription: x  # trailing\ntags: [a, b]\n---\n# T\n\nintro\n\n## Notes\nkeep me\n\n## Fact\nf\n\n### sub\n\n## Access log\nused, 01.01.26\nnote\n",
		"unclosed":                     "---\ndescription: x\n# T\n",
		"only fm":                      "---\ndescription: x\n---",
		"duplicate sections":           "## Fact\na\n## Fact\nb\n",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			m, _ := Parse("user_memory/x.md", []byte(in))
			if got := string(m.Render()); got != in {
				t.Errorf("round trip:\n got %q\nwant %q", got, in)
			}
		})
	}
}

func TestUseCountOnlyAccessLog(t *testing.T) {
	in := "---\ndescription: d\n---\n# T\n\n## Fact\nused, used, used, 01.01.26\nused, 02.02.26\n\n## Episode\nused, 03.03.26\n\n## Access log\nused, 04.04.26\n  used,05.04.26\nnot used, 06.04.26\nused 07.04.26\n"
	m, probs := Parse("user_memory/x.md", []byte(in))
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	if m.Uses != 2 {
		t.Errorf("uses = %d, want 2", m.Uses)
	}
	if want := time.Date(2026, 4, 5, 0, 0, 0, 0, time.UTC); !m.LastUsed.Equal(want) {
		t.Errorf("last used %v", m.LastUsed)
	}
}

func TestMutatorsKeepUnknownAndLog(t *testing.T) {
	in := "---\n# keep this comment\ndescription: old\nstatus: active\ntags: [x]\n---\n# Title\n\nPreamble text.\n\n## Fact\nold fact\n\n## Notes\nA person's own section.\n\n## Episode\nold episode\n\n## Access log\nused, 01.01.26\nused, 02.01.26\n"
	m, probs := Parse("user_memory/x.md", []byte(in))
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	m.SetFact("new fact\nline two")
	m.SetEpisode("new episode")
	m.SetDescription("new\ndescription")
	m.SetStatus(StatusSuperseded, "user_memory/y")
	m.SetSupersedes("user_memory/w")
	m.AddUse(time.Date(2026, 3, 5, 10, 0, 0, 0, time.UTC))
	want := "---\n# keep this comment\ndescription: new description\nstatus: superseded\ntags: [x]\nsuperseded_by: user_memory/y\nsupersedes: user_memory/w\n---\n# Title\n\nPreamble text.\n\n## Fact\nnew fact\nline two\n\n## Notes\nA person's own section.\n\n## Episode\nnew episode\n\n## Access log\nused, 01.01.26\nused, 02.01.26\nused, 05.03.26\n"
	got := string(m.Render())
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	again, probs := Parse(m.Path, []byte(got))
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	if again.Uses != 3 || again.Fact != "new fact\nline two" || again.Front.Status != StatusSuperseded || again.Front.SupersededBy != "user_memory/y" || again.Front.Description != "new description" || again.Active() {
		t.Errorf("reparsed %+v", again)
	}
	if m.Uses != 3 || m.Fact != again.Fact || m.Front.Description != again.Front.Description || m.Front.Status != again.Front.Status {
		t.Errorf("in-memory fields out of step: %+v", m)
	}
	// Back to active drops superseded_by.
	again.SetStatus(StatusActive, "")
	if s := string(again.Render()); strings.Contains(s, "superseded_by") || !strings.Contains(s, "status: active\n") {
		t.Errorf("after reactivation:\n%s", s)
	}
}

func TestMutatorsAddMissingSections(t *testing.T) {
	m, _ := Parse("user_memory/x.md", []byte("# Bare\n"))
	m.SetEpisode("ep")
	m.SetFact("fact")
	m.AddUse(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	m.SetDescription("d")
	want := "---\ndescription: d\n---\n# Bare\n\n## Fact\nfact\n\n## Episode\nep\n\n## Access log\nused, 02.01.26\n"
	if got := string(m.Render()); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	// A fact that looks like a heading cannot split the file.
	m.SetFact("## Access log\nused, 01.01.26")
	again, _ := Parse(m.Path, m.Render())
	if again.Uses != 1 {
		t.Errorf("heading in fact changed the use count: %d\n%s", again.Uses, m.Render())
	}
}

func TestNewMemory(t *testing.T) {
	m := NewMemory("user_memory/likes-tea.md", "Likes Tea", "Drinks green tea", "You drink green tea.", "", time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	want := "---\ndescription: Drinks green tea\nstatus: active\ncreated: 29.11.26\n---\n# Likes Tea\n\n## Fact\nYou drink green tea.\n\n## Access log\n"
	if got := string(m.Render()); got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	if probs := Validate(m.Path, m.Render(), nil); len(probs) != 0 {
		t.Fatal(probs)
	}
	// echo "used, ..." >> file appends a use.
	m2, _ := Parse(m.Path, append(m.Render(), "used, 30.11.26\n"...))
	if m2.Uses != 1 {
		t.Errorf("appended use not counted")
	}
	m.AddUse(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	if string(m.Render()) != string(m2.Render()) {
		t.Errorf("AddUse differs from echo >>:\n%s", m.Render())
	}
	// Quoting of descriptions YAML would misread.
	for _, d := range []string{"a: b", "#tag", "yes", "12", `quote "x"`, "- dash"} {
		m := NewMemory("user_memory/q.md", "", d, "f", "", time.Time{})
		again, probs := Parse(m.Path, m.Render())
		if len(probs) != 0 || again.Front.Description != d {
			t.Errorf("description %q came back as %q (%v)", d, again.Front.Description, probs)
		}
	}
}

func TestCloneIndependent(t *testing.T) {
	m, _ := Parse("user_memory/x.md", []byte(seed))
	c := m.Clone()
	c.SetFact("changed")
	c.AddUse(time.Now())
	if string(m.Render()) != seed {
		t.Errorf("clone mutation leaked into original")
	}
}

func TestSetTitle(t *testing.T) {
	cases := []struct{ in, title, want string }{
		{seed, "Loves Coffee", strings.Replace(seed, "# Likes Coffee", "# Loves Coffee", 1)},
		{"---\ndescription: d\n---\n## Fact\nf\n", "New", "---\ndescription: d\n---\n# New\n\n## Fact\nf\n"},
		{"", "New", "# New\n"},
		{"---\ndescription: d\n---", "New", "---\ndescription: d\n---\n# New\n"},
	}
	for _, c := range cases {
		m, _ := Parse("user_memory/x.md", []byte(c.in))
		m.SetTitle(c.title)
		if got := string(m.Render()); got != c.want {
			t.Errorf("SetTitle(%q) on %q:\n got %q\nwant %q", c.title, c.in, got, c.want)
		}
		if again, _ := Parse(m.Path, m.Render()); again.Title != c.title {
			t.Errorf("title reparsed as %q", again.Title)
		}
	}
}

func TestByteOrderMark(t *testing.T) {
	m, probs := Parse("user_memory/x.md", []byte("\ufeff---\ndescription: with BOM\n---\n# T\n"))
	if len(probs) != 0 || m.Front.Description != "with BOM" {
		t.Errorf("BOM: %v %+v", probs, m.Front)
	}
}

func TestSetKeyKeepsComments(t *testing.T) {
	in := "---\ndescription: |\n  two\n  lines\n# why the status\n\nstatus: active # inline\ntags: [a]\n# trailing comment\n---\n# T\n"
	m, probs := Parse("user_memory/x.md", []byte(in))
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	m.SetDescription("one line")
	m.SetStatus(StatusRetracted, "")
	want := "---\ndescription: one line\n# why the status\n\nstatus: retracted\ntags: [a]\n# trailing comment\n---\n# T\n"
	if got := string(m.Render()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestUseDates: only the access log's stamps are uses, as Parse counts them;
// a stamp in the fact or with a bad date is none.
func TestUseDates(t *testing.T) {
	data := []byte("---\ndescription: x\n---\n# X\n\n## Fact\nused, 01.01.26 is in the fact\n\n## Access log\nused, 02.01.26\nused, 99.99.99\n  used, 03.01.26  \n")
	got := UseDates("user_memory/x.md", data)
	if len(got) != 2 || got[0].Day() != 2 || got[1].Day() != 3 {
		t.Fatalf("UseDates = %v, want the 2nd and 3rd of January", got)
	}
	for _, c := range []struct {
		line    string
		use, ok bool
	}{
		{"used, 31.08.26", true, true},
		{"  used,31.08.26 ", true, true},
		{"used, 31.13.26", true, false},
		{"used 31.08.26", false, false},
		{"# used, 31.08.26", false, false},
	} {
		if _, use, ok := UseStamp(c.line); use != c.use || ok != c.ok {
			t.Errorf("UseStamp(%q) = use %v ok %v, want %v %v", c.line, use, ok, c.use, c.ok)
		}
	}
}

// TestBody: where a memory's frontmatter ends, as the web page shows the
// body: a byte order mark, "..." as the end and CRLF lines are
// frontmatter too; an unclosed block is all body.
func TestBody(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"---\ndescription: x\n---\n# T\n", "# T\n"},
		{"\ufeff---\ndescription: x\n---\n# T\n", "# T\n"},
		{"---\ndescription: x\n...\n# T\n", "# T\n"},
		{"---\r\ndescription: x\r\n---\r\n# T\r\n", "# T\r\n"},
		{"---\n---\nbody", "body"},
		{"---\nunterminated", "---\nunterminated"},
		{"no frontmatter", "no frontmatter"},
		{"", ""},
	} {
		if got := Body(c.in); got != c.want {
			t.Errorf("Body(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzBody(f *testing.F) {
	f.Add("---\ndescription: x\n---\n# T\n")
	f.Add("\ufeff---\n...\nbody")
	f.Fuzz(func(t *testing.T, text string) {
		if body := Body(text); !strings.HasSuffix(text, body) {
			t.Fatalf("body %q is not the tail of %q", body, text)
		}
	})
}
