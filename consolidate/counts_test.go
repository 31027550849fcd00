package consolidate

import (
	"strings"
	"testing"
)

// TestSubjectCountsMatchTheCommit: the counts of a consolidation commit's
// subject (and of the Report) say what the commit changes. A contradiction
// adds the new fact's file and retires the old one: "1 added … 1
// contradicted", not "0 added" beside a new file. Each case also checks
// the counts against the commit itself with the git CLI: added is the
// number of memory files it adds, contradicted the number it retires,
// updated the number whose fact it changes.
func TestSubjectCountsMatchTheCommit(t *testing.T) {
	existing := map[string]string{
		"user_memory/likes-coffee.md":   memoryFile("Enjoys specialty coffee", "Likes Coffee", "You enjoy specialty coffee.", "01.11.26"),
		"user_memory/lives-in-porto.md": memoryFile("Lives in Porto", "Lives In Porto", "You live in Porto."),
		"user_memory/plays-piano.md":    memoryFile("Plays the piano", "Plays Piano", "You play the piano."),
		"user_memory/protected.md":      "---\ndescription: Protected\nread_only: true\n---\n# Protected\n\n## Fact\nProtected.\n",
	}
	coffee := Fact{Kind: "user", Slug: "loves-coffee", Description: "Enjoys specialty coffee", Fact: "You love specialty coffee, pour-over above all."}
	lisbon := Fact{Kind: "user", Slug: "lives-in-lisbon", Description: "Lives in Lisbon, not Porto", Fact: "You moved from Porto to Lisbon."}
	piano := Fact{Kind: "user", Slug: "plays-piano", Description: "Plays the piano", Fact: "You play the piano."}
	bees := Fact{Kind: "user", Slug: "keeps-bees", Description: "Keeps bees", Fact: "You keep two beehives."}
	cases := []struct {
		name  string
		facts []Fact
		decs  []Decision
		want  string // the subject's counts
	}{
		{"add", []Fact{bees}, []Decision{{Fact: 0, Action: ActionAdd}},
			"1 added, 0 updated, 0 contradicted, 0 unchanged"},
		{"contradiction adds and retires", []Fact{lisbon}, []Decision{{Fact: 0, Action: ActionDelete, Target: "user_memory/lives-in-porto"}},
			"1 added, 0 updated, 1 contradicted, 0 unchanged"},
		{"update", []Fact{coffee}, []Decision{{Fact: 0, Action: ActionUpdate, Target: "user_memory/likes-coffee", Text: coffee.Fact}},
			"0 added, 1 updated, 0 contradicted, 0 unchanged"},
		{"two refinements of one memory are one update", []Fact{coffee, {Kind: "user", Slug: "coffee-black", Description: "Enjoys specialty coffee black", Fact: "You drink specialty coffee black."}},
			[]Decision{{Fact: 0, Action: ActionUpdate, Target: "user_memory/likes-coffee", Text: coffee.Fact}, {Fact: 1, Action: ActionUpdate, Target: "user_memory/likes-coffee", Text: "You love specialty coffee, black."}},
			"0 added, 1 updated, 0 contradicted, 0 unchanged"},
		{"a refinement that changes nothing is no update", []Fact{piano}, []Decision{{Fact: 0, Action: ActionUpdate, Target: "user_memory/plays-piano", Text: piano.Fact}},
			"0 added, 0 updated, 0 contradicted, 0 unchanged"},
		{"already known", []Fact{piano}, []Decision{{Fact: 0, Action: ActionNone, Target: "user_memory/plays-piano"}},
			"0 added, 0 updated, 0 contradicted, 1 unchanged"},
		{"a contradiction of no memory adds the fact", []Fact{lisbon}, []Decision{{Fact: 0, Action: ActionDelete, Target: "user_memory/no-such-memory"}},
			"1 added, 0 updated, 0 contradicted, 0 unchanged"},
		{"a change of a read_only memory is refused", []Fact{lisbon}, []Decision{{Fact: 0, Action: ActionUpdate, Target: "user_memory/protected", Text: "x"}},
			"0 added, 0 updated, 0 contradicted, 0 unchanged, 1 skipped"},
		{"all at once", []Fact{bees, lisbon, coffee, piano},
			[]Decision{{Fact: 0, Action: ActionAdd}, {Fact: 1, Action: ActionDelete, Target: "user_memory/lives-in-porto"},
				{Fact: 2, Action: ActionUpdate, Target: "user_memory/likes-coffee", Text: coffee.Fact}, {Fact: 3, Action: ActionNone, Target: "user_memory/plays-piano"}},
			"2 added, 1 updated, 1 contradicted, 1 unchanged"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, "ollama", existing)
			e.addTranscript("transcripts/s.jsonl", jsonl("I said a few things about myself."))
			e.script(tc.facts, tc.decs)
			rep := e.run()
			if len(rep.Problems) > 0 {
				t.Logf("problems: %q", rep.Problems)
			}
			want := "consolidate transcripts/s.jsonl#1: " + tc.want
			if subject := strings.TrimSpace(e.git("log", "-1", "--format=%s", "HEAD^2")); subject != want {
				t.Errorf("the dream's subject %q, want %q", subject, want)
			}
			if subject := e.lastSubject(); subject != want+" (merge of dream 1)" {
				t.Errorf("the merge's subject %q, want %q", subject, want+" (merge of dream 1)")
			}
			if got := counts(rep.Added, rep.Updated, rep.Contradicted, rep.Unchanged, rep.Skipped); got != tc.want {
				t.Errorf("report %q, want %q", got, tc.want)
			}
			// The same counts, read off the commit.
			var added, retired, refined int
			for _, line := range strings.Split(strings.TrimSpace(e.git("diff-tree", "--no-commit-id", "-r", "--name-status", "HEAD^1", "HEAD")), "\n") {
				st, rel, _ := strings.Cut(line, "\t")
				if !strings.HasPrefix(rel, "user_memory/") {
					continue
				}
				switch st {
				case "A":
					added++
				case "M":
					before, after := e.git("show", "HEAD~1:"+rel), e.git("show", "HEAD:"+rel)
					switch {
					case !strings.Contains(before, "status: contradicted") && strings.Contains(after, "status: contradicted"):
						retired++
					case factOf(before) != factOf(after):
						refined++
					}
				default:
					t.Errorf("consolidation commit has %s", line)
				}
			}
			if rep.Added != added || rep.Contradicted != retired || rep.Updated != refined {
				t.Errorf("counts %d added, %d updated, %d contradicted; the commit adds %d, refines %d, retires %d",
					rep.Added, rep.Updated, rep.Contradicted, added, refined, retired)
			}
			e.checkGit()
		})
	}
}

// factOf returns the ## Fact section of a memory file.
func factOf(md string) string {
	_, rest, _ := strings.Cut(md, "## Fact\n")
	fact, _, _ := strings.Cut(rest, "\n## ")
	return strings.TrimSpace(fact)
}
