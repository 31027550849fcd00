// Package scopetest builds the graphs of a canary test of team scopes:
// a user's personal graph with one team attached, and the graphs of
// another user and another team that must never show through it. Each
// graph's memories carry one word found nowhere else.
package scopetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mindmount/mindmount/memgraph"
)

// The canary words: one per graph.
const (
	Personal  = "zorbalice" // the user's own memory
	Team      = "zorbeng"   // the team the user belongs to (attached as "eng")
	OtherUser = "zorbcarol" // another user's memory
	OtherTeam = "zorbops"   // a team the user does not belong to ("ops")
)

// Words are every canary; Visible those the user may see.
var (
	Words   = []string{Personal, Team, OtherUser, OtherTeam}
	Visible = map[string]bool{Personal: true, Team: true}
)

// WriteMemories writes into dir a user memory, a character memory, a
// system block and an external note, each naming word.
func WriteMemories(t testing.TB, dir, word string) {
	t.Helper()
	mem := func(desc, fact string) string {
		return "---\ndescription: " + desc + "\n---\n# " + desc + "\n\n## Fact\n" + fact + "\n\n## Access log\nused, 01.01.26\n"
	}
	files := map[string]string{
		"user_memory/" + word + "-fact.md":      mem("The "+word+" fact", "The secret word is "+word+"."),
		"character_memory/" + word + "-tone.md": mem("Talk about "+word, "Mention "+word+" kindly."),
		"system/" + word + ".md":                "# Rule\n\nAlways remember " + word + ".\n",
		"notes/" + word + "-note.md":            mem("A note on "+word, word+" notes."),
	}
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Graph scans a new repository holding word's memories.
func Graph(t testing.TB, word string) *memgraph.Graph {
	t.Helper()
	dir := t.TempDir()
	WriteMemories(t, dir, word)
	g, err := memgraph.Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g
}

// Attach attaches team eng (canary Team) to g and builds the graphs of
// another user and of team ops beside it, never attached; it returns them
// so the test keeps them alive while it queries.
func Attach(t testing.TB, g *memgraph.Graph) (others []*memgraph.Graph) {
	t.Helper()
	if err := g.AttachScopes([]memgraph.Scope{{Name: "eng", Graph: Graph(t, Team)}}); err != nil {
		t.Fatal(err)
	}
	return []*memgraph.Graph{Graph(t, OtherUser), Graph(t, OtherTeam)}
}

// Check fails t when text holds a canary the user may not see, and, when
// want is one the user may see, when text lacks it. Lines that only echo
// the question ("# Recall: …", "no memory matches …") are not counted.
func Check(t testing.TB, door, want, text string) {
	t.Helper()
	var kept []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "# Recall: ") && !strings.HasPrefix(strings.ToLower(l), "no memory matches") {
			kept = append(kept, l)
		}
	}
	text = strings.Join(kept, "\n")
	for _, w := range Words {
		if !Visible[w] && containsFold(text, w) {
			t.Errorf("%s, asked for %s: shows %s, of a graph not attached:\n%s", door, want, w, text)
		}
	}
	if Visible[want] && !containsFold(text, want) {
		t.Errorf("%s: does not find %s, which the user may see:\n%s", door, want, text)
	}
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
