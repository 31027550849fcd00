package memgraph

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{seed, "", "---\n", "---\n---\n", "---\ndescription: x\n---", "## Access log\nused, 01.01.26\n",
		"---\ndescription: [\n---\n", "---\r\ndescription: x\r\n---\r\n## Fact\r\n", "# T\n## Fact\n## Fact\n", "---\n*a\n---\n",
		"---\ntags: &a [x]\nsource: *a\n---\n", "\xff\x00---\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, path := range []string{"user_memory/x.md", "notes/x.md"} {
			m, _ := Parse(path, []byte(in))
			out := m.Render()
			if string(out) != in {
				t.Fatalf("Render(Parse(x)) != x:\n%q\n%q", in, out)
			}
			_ = Validate(path, []byte(in), []byte(seed))
			// Mutations must give a file that parses back to what was set,
			// and rendering that stays stable.
			m.SetFact("fact " + in)
			m.SetDescription("d " + in)
			m.SetTitle("t " + in)
			m.AddUse(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
			r1 := m.Render()
			m2, _ := Parse(path, r1)
			r2 := m2.Render()
			if string(r1) != string(r2) {
				t.Fatalf("render∘parse not stable")
			}
			m3, _ := Parse(path, r2)
			if string(m3.Render()) != string(r2) {
				t.Fatalf("render∘parse∘render∘parse not stable")
			}
		}
	})
}

func FuzzSlug(f *testing.F) {
	for _, s := range []string{"José Café", "../../etc/passwd", "", strings.Repeat("a b ", 60), "日本", "..", "a/b", "-x-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s := Slug(in)
		if !ValidSlug(s) || strings.Contains(s, "/") || strings.Contains(s, "..") || strings.Contains(s, ".") {
			t.Fatalf("Slug(%q) = %q", in, s)
		}
		if u, err := UniqueSlug(in, func(x string) bool { return x == s || x == s+"-2" }); err != nil || !ValidSlug(u) {
			t.Fatalf("UniqueSlug(%q) = %q", in, u)
		}
	})
}

// FuzzFrontmatterFastPath checks that the yaml-free fast path reads every
// frontmatter it accepts exactly as yaml.v3 does.
func FuzzFrontmatterFastPath(f *testing.F) {
	for _, s := range []string{"description: x", "description: a: b", "status: active\nread_only: true", "description: ~", "description: x #c",
		"description: 'q'", "created: 29.11.26\nsource: consolidate transcripts/s1.jsonl#1-5", "description: yes", "description: 1e3", "read_only: yes",
		"description: x\u2028y", "description: -x", "description: x\r", "superseded_by: user_memory/y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		data := []byte("---\n" + in + "\n---\n# T\n")
		fast, fastProbs := Parse("user_memory/x.md", data)
		noFastPath = true
		slow, slowProbs := Parse("user_memory/x.md", data)
		noFastPath = false
		if len(fastProbs) != len(slowProbs) {
			t.Fatalf("problems differ:\nfast %v\nslow %v", fastProbs, slowProbs)
		}
		if len(slow.Front.Tags) == 0 {
			slow.Front.Tags = nil
		}
		if fmt.Sprintf("%#v", fast.Front) != fmt.Sprintf("%#v", slow.Front) {
			t.Fatalf("front differs:\nfast %#v\nslow %#v", fast.Front, slow.Front)
		}
		if fmt.Sprint(fast.raw.keys) != fmt.Sprint(slow.raw.keys) {
			t.Fatalf("key spans differ:\nfast %v\nslow %v", fast.raw.keys, slow.raw.keys)
		}
	})
}
