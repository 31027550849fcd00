package memgraph

import (
	"strings"
	"testing"
)

// A use stamp outside the Access log is neither counted nor ignored
// silently: it is reported with its line.
func TestStrayUseStamps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		body     string
		uses     int
		problems []string // "line:substring"
	}{
		{"appended without heading", "# Tea\n\n## Fact\nTea.\nused, 01.12.26\n", 0, []string{"8:outside the '## Access log'"}},
		{"under notes, no access log", "# Tea\n\n## Notes\nused, 01.12.26\nused, 02.12.26\n", 0,
			[]string{"7:outside", "8:outside"}},
		{"under notes beside an access log", "# Tea\n\n## Notes\nused, 01.12.26\n\n## Access log\nused, 03.12.26\n", 1, nil},
		{"in the access log", "# Tea\n\n## Access log\nused, 01.12.26\n", 1, nil},
		{"prose mentioning used", "# Tea\n\n## Fact\nused, but not a stamp\n", 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := "---\ndescription: Likes tea\n---\n" + tc.body
			m, probs := Parse("user_memory/tea.md", []byte(data))
			if m.Uses != tc.uses {
				t.Errorf("uses = %d, want %d", m.Uses, tc.uses)
			}
			if len(probs) != len(tc.problems) {
				t.Fatalf("problems = %v, want %v", probs, tc.problems)
			}
			for i, want := range tc.problems {
				line, sub, _ := strings.Cut(want, ":")
				got := probs[i].String()
				if !strings.Contains(got, ":"+line+":") || !strings.Contains(got, sub) {
					t.Errorf("problem %d = %q, want line %s and %q", i, got, line, sub)
				}
			}
		})
	}
}

// A "## Fact" inside a fenced code block (an example in a README) is not a
// section: the file's own Fact stays empty, and the text round-trips.
func TestFencedHeadingsAreNotSections(t *testing.T) {
	data := "---\ndescription: How this memory works\n---\n# Your memory\n\n" +
		"```sh\ncat > x.md <<'MEM'\n## Fact\nYou enjoy coffee.\n\n## Access log\nused, 01.12.26\nMEM\n```\n\n" +
		"~~~~\n## Episode\n```\nstill inside\n~~~~\n\n## Fact\nReal fact.\n"
	m, probs := Parse("docs/readme.md", []byte(data))
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	if m.Fact != "Real fact." || m.Episode != "" || m.Uses != 0 {
		t.Fatalf("fact %q, episode %q, uses %d", m.Fact, m.Episode, m.Uses)
	}
	if got := string(m.Render()); got != data {
		t.Fatalf("round trip:\n%q\nwant\n%q", got, data)
	}
}

func TestFenceMarker(t *testing.T) {
	for line, want := range map[string]string{
		"```\n": "```", "```sh\n": "```", "~~~~\n": "~~~~", "   ```\n": "```",
		"    ```\n": "", "``\n": "", "## Fact\n": "", "text ```\n": "",
	} {
		if got := fenceMarker(line); got != want {
			t.Errorf("fenceMarker(%q) = %q, want %q", line, got, want)
		}
	}
}
