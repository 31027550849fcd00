package consolidate

import (
	"strings"
	"testing"

	"github.com/mindmount/mindmount/consolidate/llmtest"
	"github.com/mindmount/mindmount/memgraph/secret/secrettest"
)

// Planted secrets, split so no scanner mistakes this file for a leak.
var (
	plantedKey = "sk-proj-" + "Zq8xWv3kLm9Np2Rt5Yb7Qe"
	plantedAWS = "AKIA" + "IOSFODNN7EXAMPLE"
	planted    = []string{"hunter2", plantedKey, plantedAWS}
	secretText = "Password: hunter2, key " + plantedKey + " and " + plantedAWS
)

// TestModelSecretsNeverWritten is issue 14 defect 2: whatever the model
// returns is redacted before it is written, on every path (ADD, UPDATE,
// DELETE, NONE), in every field (slug, description, text, episode, topic,
// search terms, target), and none of it reaches a file, a commit or any
// git object.
func TestModelSecretsNeverWritten(t *testing.T) {
	both(t, func(t *testing.T, provider string) {
		e := newEnv(t, provider, map[string]string{
			"user_memory/wifi-at-home.md": memoryFile("Has wifi at home", "Wifi At Home", "You have wifi at home."),
			"user_memory/uses-laptop.md":  memoryFile("Uses a laptop for work", "Uses Laptop", "You use a laptop for work."),
		})
		// UPDATE with secrets in description and text.
		e.addTranscript("transcripts/s1.jsonl", jsonl("My home wifi is fast."))
		e.script([]Fact{{Kind: "user", Slug: "wifi-at-home", Description: "Has fast wifi at home", Fact: "You have fast wifi at home."}},
			[]Decision{{Fact: 0, Action: ActionUpdate, Target: "user_memory/wifi-at-home", Description: "Wifi " + secretText, Text: "You have fast wifi at home. " + secretText}})
		rep := e.run()
		if rep.Updated != 1 || rep.Redactions < 3 {
			t.Fatalf("UPDATE report %+v", rep)
		}
		if m := e.read("user_memory/wifi-at-home.md"); !strings.Contains(m, "[REDACTED:") || !strings.Contains(m, "fast wifi") {
			t.Fatalf("updated memory:\n%s", m)
		}
		// DELETE (contradiction) with secrets in description and text.
		e.addTranscript("transcripts/s2.jsonl", jsonl("I use a tablet for work now."))
		e.script([]Fact{{Kind: "user", Slug: "uses-tablet", Description: "Uses a tablet for work", Fact: "You use a tablet for work."}},
			[]Decision{{Fact: 0, Action: ActionDelete, Target: "user_memory/uses-laptop", Description: "Tablet " + secretText, Text: "You use a tablet. " + secretText}})
		if rep := e.run(); rep.Contradicted != 1 {
			t.Fatalf("DELETE report %+v", rep)
		}
		// ADD with secrets in every field of the fact.
		e.addTranscript("transcripts/s3.jsonl", jsonl("I keep bees."))
		e.script([]Fact{{Kind: "user", Slug: "keeps-bees " + plantedKey, Description: "Keeps bees " + secretText, Fact: "You keep bees. " + secretText,
			Episode: "Said so. " + secretText, Topic: "hobby", Search: []string{"bees " + plantedAWS, "hunter2"}}},
			[]Decision{{Fact: 0, Action: ActionAdd}})
		if rep := e.run(); rep.Added != 1 {
			t.Fatalf("ADD report %+v", rep)
		}
		// A target carrying a secret is refused (it names no memory),
		// and the refusal quoted in the commit message and the report is
		// redacted.
		e.addTranscript("transcripts/s4.jsonl", jsonl("Still have wifi."))
		e.script([]Fact{{Kind: "user", Slug: "wifi", Description: "Has wifi", Fact: "You have wifi."}},
			[]Decision{{Fact: 0, Action: ActionNone, Target: "user_memory/" + plantedKey}})
		rep = e.run()
		if rep.Skipped != 1 || strings.Contains(strings.Join(rep.Problems, "\n"), plantedKey) || strings.Contains(rep.String(), plantedKey) {
			t.Fatalf("report %+v", rep)
		}
		if st := e.c.Status(); strings.Contains(st, plantedKey) {
			t.Fatalf("status %q", st)
		}
		e.checkGit()
		// The inbox is local and may hold the text; everything else,
		// .git/ and every decompressed object included, must not.
		secrettest.ScanRepo(t, e.dir, planted, "transcripts")
	})
}

// TestFailedAnswerErrorRedacted: an unusable answer quoting a secret does
// not carry it into the status line.
func TestFailedAnswerErrorRedacted(t *testing.T) {
	e := loopEnv(t, 0, 1)
	e.addTranscript("transcripts/s.jsonl", jsonl("hello"))
	e.srv.Queue(llmtest.KindExtract, llmtest.Reply{Content: "no json here, just " + secretText})
	startLoop(t, e)
	e.c.Request()
	waitFor(t, "the failed run", func() bool { return strings.Contains(e.c.Status(), "failed") })
	for _, s := range planted {
		if strings.Contains(e.c.Status(), s) {
			t.Fatalf("status quotes %q: %s", s, e.c.Status())
		}
	}
}

// TestTargetNotACandidateAddsTheFact: a model answer whose UPDATE or
// DELETE targets an existing, active memory it was not shown leaves that
// memory alone (the rule "target must be one of the candidates", issue 14
// mutant list) and loses no fact: it is added as a new memory, and the odd
// target is reported (issue 26).
func TestTargetNotACandidateAddsTheFact(t *testing.T) {
	for _, action := range []Action{ActionUpdate, ActionDelete, ActionNone} {
		t.Run(string(action), func(t *testing.T) {
			boat := memoryFile("Owns a sailing boat", "Owns Boat", "You own a sailing boat.")
			e := newEnv(t, "ollama", map[string]string{
				"user_memory/likes-tea.md": memoryFile("Likes green tea", "Likes Tea", "You like green tea."),
				"user_memory/owns-boat.md": boat,
			})
			e.addTranscript("transcripts/s.jsonl", jsonl("I like green tea with jasmine."))
			e.script([]Fact{{Kind: "user", Slug: "likes-jasmine-tea", Description: "Likes green tea with jasmine", Fact: "You like green tea with jasmine."}},
				[]Decision{{Fact: 0, Action: action, Target: "user_memory/owns-boat", Description: "x", Text: "You like jasmine tea."}})
			rep := e.run()
			dec := e.srv.CallsOf(llmtest.KindDecide)
			if len(dec) != 1 || strings.Contains(dec[0].Prompt, "owns-boat") || !strings.Contains(dec[0].Prompt, "likes-tea") {
				t.Fatalf("candidates shown: %v", dec)
			}
			if rep.Added != 1 || rep.Skipped+rep.Updated+rep.Contradicted != 0 {
				t.Fatalf("report %+v", rep)
			}
			if p := strings.Join(rep.Problems, "\n"); !strings.Contains(p, "not one of the candidates") || !strings.Contains(p, "added as a new memory") {
				t.Fatalf("problems %q", rep.Problems)
			}
			if e.read("user_memory/owns-boat.md") != boat {
				t.Fatal("the unrelated memory changed")
			}
			if m := e.mem("user_memory/likes-jasmine-tea.md"); m.Fact != "You like green tea with jasmine." || !m.Active() {
				t.Fatalf("the fact was not added as itself: %q", m.Fact)
			}
			if msg := e.git("log", "-1", "--format=%B"); !strings.Contains(msg, "not one of the candidates") {
				t.Fatalf("the commit does not name the odd target:\n%s", msg)
			}
		})
	}
}

// TestCandidatesActiveOnly: consolidation offers only active memories,
// through recall and through the topic; checked here on its own because
// recall filters by status too and would hide a mutant in either layer.
func TestCandidatesActiveOnly(t *testing.T) {
	retired := "---\ndescription: Lives in Porto\nstatus: contradicted\ntopic: home-city\n---\n# Lives In Porto\n\n## Fact\nYou live in Porto.\n"
	e := newEnv(t, "ollama", map[string]string{
		"user_memory/lives-in-porto.md": retired,
		"user_memory/lives-in-braga.md": "---\ndescription: Lives in Braga\nstatus: active\ntopic: home-city\n---\n# Lives In Braga\n\n## Fact\nYou live in Braga.\n",
	})
	s := &chunkRun{c: e.c, snap: map[string][]byte{}, head: map[string][]byte{}}
	got := s.candidates(t.Context(), Fact{Kind: "user", Description: "Lives in Porto", Fact: "You live in Porto.", Topic: "home-city"})
	var paths []string
	for _, c := range got {
		paths = append(paths, c.Path+" ("+c.Why+")")
	}
	if len(got) != 1 || got[0].Path != "user_memory/lives-in-braga.md" || !strings.Contains(got[0].Why, "same topic home-city") {
		t.Fatalf("candidates %v", paths)
	}
}

// TestCandidatesActiveOnlyOwnCheck: recall still ranks a memory the graph
// thinks active, but the file on disk (what the run reads) was retired in
// the meantime: consolidation's own check must drop it.
func TestCandidatesActiveOnlyOwnCheck(t *testing.T) {
	e := newEnv(t, "ollama", map[string]string{
		"user_memory/plays-chess.md": memoryFile("Plays chess on Sundays", "Plays Chess", "You play chess on Sundays."),
	})
	s := &chunkRun{c: e.c, snap: map[string][]byte{}, head: map[string][]byte{}}
	f := Fact{Kind: "user", Description: "Plays chess on Sundays", Fact: "You play chess on Sundays."}
	if got := s.candidates(t.Context(), f); len(got) != 1 {
		t.Fatalf("the active memory is not offered: %v", got)
	}
	e.write("user_memory/plays-chess.md", strings.Replace(e.read("user_memory/plays-chess.md"), "status: active", "status: retracted", 1))
	s = &chunkRun{c: e.c, snap: map[string][]byte{}, head: map[string][]byte{}}
	if got := s.candidates(t.Context(), f); len(got) != 0 {
		t.Fatalf("a retracted memory was offered: %v", got[0].Path)
	}
}
