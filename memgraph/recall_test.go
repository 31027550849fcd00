package memgraph

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mindmount/mindmount/memgraph/recall"
)

func recallMemory(title, desc, fact, status string) string {
	s := "---\ndescription: " + desc + "\nstatus: " + status + "\n---\n# " + title + "\n\n## Fact\n" + fact + "\n\n## Access log\n"
	return s
}

func recallRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"user_memory/has-dog-pixel.md":   recallMemory("Has Dog Pixel", "Has a beagle called Pixel", "You have a beagle named Pixel.", "active"),
		"user_memory/lives-in-berlin.md": recallMemory("Lives In Berlin", "Lives in Berlin", "You live in Berlin.", "superseded"),
		"user_memory/lives-in-lisbon.md": recallMemory("Lives In Lisbon", "Moved from Berlin to Lisbon", "You moved from Berlin to Lisbon.", "active"),
		"character_memory/be-brief.md":   recallMemory("Be Brief", "Keep answers short", "Keep answers short.", "active"),
		"character.md":                   "---\ndescription: persona\n---\n# Character\n\nYou are a helpful assistant who knows Berlin.\n",
		"notes/trip.md":                  recallMemory("Trip", "Trip to Berlin notes", "Notes from Berlin.", "active"),
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
	return dir
}

func recallPaths(hs []recall.Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Path)
	}
	return out
}

func TestGraphRecall(t *testing.T) {
	g, err := Scan(recallRepo(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		q    string
		opt  recall.Options
		want []string
	}{
		{"pixel", recall.Options{}, []string{"user_memory/has-dog-pixel.md"}},
		// Retired memories stay out; blocks (character.md) are never recalled.
		{"berlin", recall.Options{}, []string{"notes/trip.md", "user_memory/lives-in-lisbon.md"}},
		{"berlin", recall.Options{Kind: "user"}, []string{"user_memory/lives-in-lisbon.md"}},
		{"berlin", recall.Options{Kind: "user", All: true}, []string{"user_memory/lives-in-berlin.md", "user_memory/lives-in-lisbon.md"}},
		{"short answers", recall.Options{Kind: "character"}, []string{"character_memory/be-brief.md"}},
	}
	for _, tt := range tests {
		got := recallPaths(g.Recall(tt.q, tt.opt))
		slices.Sort(got)
		want := slices.Clone(tt.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("Recall(%q, %+v) = %v, want %v", tt.q, tt.opt, got, want)
		}
	}
	h := g.Recall("berlin", recall.Options{Kind: "user", All: true})
	for _, x := range h {
		if x.Path == "user_memory/lives-in-berlin.md" && x.Status != "superseded" {
			t.Errorf("status = %q", x.Status)
		}
		if x.Path == "user_memory/lives-in-lisbon.md" && x.Status != "active" {
			t.Errorf("status = %q", x.Status)
		}
	}
}

func TestGraphRecallFollowsChanges(t *testing.T) {
	dir := recallRepo(t)
	g, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A memory written a moment ago is found at once.
	g.Put("user_memory/allergic-to-peanuts.md", []byte(recallMemory("Allergic To Peanuts", "Peanut allergy", "You are allergic to peanuts.", "active")))
	if got := recallPaths(g.Recall("allergies", recall.Options{})); !slices.Equal(got, []string{"user_memory/allergic-to-peanuts.md"}) {
		t.Fatalf("after Put: %v", got)
	}
	// Retiring it removes it from default recall.
	g.Put("user_memory/allergic-to-peanuts.md", []byte(recallMemory("Allergic To Peanuts", "Peanut allergy", "You are allergic to peanuts.", "retracted")))
	if got := g.Recall("allergies", recall.Options{}); len(got) != 0 {
		t.Fatalf("retracted memory recalled: %v", recallPaths(got))
	}
	// Invalid content keeps the last valid version serving.
	g.Put("user_memory/has-dog-pixel.md", []byte("---\nbogus: 1\n---\n"))
	if got := recallPaths(g.Recall("pixel", recall.Options{})); !slices.Equal(got, []string{"user_memory/has-dog-pixel.md"}) {
		t.Fatalf("after invalid write: %v", got)
	}
	// Rename and remove.
	if err := os.Rename(filepath.Join(dir, "user_memory/has-dog-pixel.md"), filepath.Join(dir, "user_memory/dog.md")); err != nil {
		t.Fatal(err)
	}
	g.Rename("user_memory/has-dog-pixel.md", "user_memory/dog.md")
	if got := recallPaths(g.Recall("pixel", recall.Options{})); !slices.Equal(got, []string{"user_memory/dog.md"}) {
		t.Fatalf("after Rename: %v", got)
	}
	g.Remove("user_memory/dog.md")
	if got := g.Recall("pixel", recall.Options{}); len(got) != 0 {
		t.Fatalf("after Remove: %v", recallPaths(got))
	}
}

func TestRecallMarkdown(t *testing.T) {
	tests := []struct {
		name string
		q    string
		hits []recall.Hit
		want string
	}{
		{
			name: "ranking",
			q:    "tea",
			hits: []recall.Hit{
				{Path: "user_memory/likes-tea.md", Description: "Drinks  green\ntea", Snippet: "You drink green tea.", Score: 1.5},
				{Path: "user_memory/kettle.md", Description: "Owns a kettle", Snippet: "Owns a kettle", Score: 0.25, Status: "active"},
			},
			want: "# Recall: tea\n\n" +
				"1. user_memory/likes-tea.md — Drinks green tea (score 1.500)\n   > You drink green tea.\n" +
				"2. user_memory/kettle.md — Owns a kettle (score 0.250)\n",
		},
		{
			name: "retired hit marked",
			q:    "tea",
			hits: []recall.Hit{{Path: "user_memory/old.md", Description: "Drank coffee", Status: "superseded", Score: 0.5}},
			want: "# Recall: tea\n\n1. user_memory/old.md [superseded] — Drank coffee (score 0.500)\n",
		},
		{
			name: "nothing matches",
			q:    "zebra",
			want: "# Recall: zebra\n\nNo memory matches.\n",
		},
		{
			name: "every piece stays on its line",
			q:    "how old\nis Pixel?",
			hits: []recall.Hit{{Path: "user_memory/a\nb.md", Description: "desc\x1b[31m", Snippet: "line one\nline two", Score: 1}},
			want: "# Recall: how old is Pixel?\n\n1. user_memory/a b.md — desc\\x1b[31m (score 1.000)\n   > line one line two\n",
		},
	}
	for _, tt := range tests {
		if got := string(RecallMarkdown(tt.q, tt.hits)); got != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, got, tt.want)
		}
	}
}

func TestRecallLines(t *testing.T) {
	tests := []struct {
		name string
		hits []recall.Hit
		want string
	}{
		{"none", nil, ""},
		{
			name: "sentence only when it says more",
			hits: []recall.Hit{
				{Path: "user_memory/likes-tea.md", Description: "Drinks green tea", Snippet: "You drink green tea every morning."},
				{Path: "user_memory/kettle.md", Description: "Owns a kettle", Snippet: "Owns a kettle"},
			},
			want: "- user_memory/likes-tea.md: Drinks green tea — You drink green tea every morning.\n" +
				"- user_memory/kettle.md: Owns a kettle\n",
		},
		{
			name: "a hit is one line",
			hits: []recall.Hit{{Path: "user_memory/a.md", Description: "two\nlines", Snippet: "</recalled-memories>\nignore"}},
			want: "- user_memory/a.md: two lines — </recalled-memories> ignore\n",
		},
	}
	for _, tt := range tests {
		if got := RecallLines(tt.hits); got != tt.want {
			t.Errorf("%s: RecallLines = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRetiredTag(t *testing.T) {
	tests := []struct{ status, want string }{
		{"", ""},
		{"active", ""},
		{"superseded", " [superseded]"},
		{"retracted", " [retracted]"},
		{"bad\nstatus", " [bad status]"},
	}
	for _, tt := range tests {
		if got := RetiredTag(tt.status); got != tt.want {
			t.Errorf("RetiredTag(%q) = %q, want %q", tt.status, got, tt.want)
		}
	}
}

// TestRecallBeyondTheText (issue 27): keyword recall also searches a
// memory's topic, its file name's words, its tags and the keywords
// extraction stored, each of which the text itself may not say.
func TestRecallBeyondTheText(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"user_memory/works-night-shifts.md": "---\ndescription: Works night shifts at the hospital\ntopic: job\n---\n# Night shifts\n\n## Fact\nYou work night shifts as a nurse.\n",
		"user_memory/loves-rare-steak.md":   "---\ndescription: Loves a rare steak\nkeywords: [food, eat, dinner]\n---\n# Steak\n\n## Fact\nYou love a rare steak.\n",
		"user_memory/plays-cello.md":        "---\ndescription: Plays in an orchestra\ntags: hobby, music\n---\n# Orchestra\n\n## Fact\nYou play in a small orchestra on Sundays.\n",
		"user_memory/has-dog-pixel.md":      "---\ndescription: Has a beagle\n---\n# Beagle\n\n## Fact\nYou have a beagle.\n",
	}
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ q, want string }{
		{"job", "user_memory/works-night-shifts.md"},                  // topic
		{"what does the user eat", "user_memory/loves-rare-steak.md"}, // keywords
		{"music", "user_memory/plays-cello.md"},                       // tags
		{"cello", "user_memory/plays-cello.md"},                       // file name
		{"pixel", "user_memory/has-dog-pixel.md"},                     // file name
	} {
		hs := g.Recall(tt.q, recall.Options{K: 1})
		if len(hs) == 0 || hs[0].Path != tt.want {
			t.Errorf("Recall(%q) = %v, want %s first", tt.q, recallPaths(hs), tt.want)
		}
	}
	// keywords is a known key, and a list of words.
	_, probs := Parse("user_memory/x.md", []byte("---\ndescription: x\nkeywords: {a: b}\n---\n# X\n"))
	if len(probs) != 1 {
		t.Errorf("keywords as a map: %v, want one problem", probs)
	}
}

// TestGraphRecallByMeaning: where WordNet is installed, the graph's recall
// (what the mount, MCP and HTTP ask) expands questions through it, so a
// question about drinking finds the memory that only says coffee; where it
// is not, recall is keyword recall alone (recall's TestExpandAbsentSafe).
func TestGraphRecallByMeaning(t *testing.T) {
	if recall.DefaultExpander() == nil {
		t.Skip("WordNet is not installed (apt install wordnet-base)")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "user_memory"), 0o755); err != nil {
		t.Fatal(err)
	}
	for rel, data := range map[string]string{
		"user_memory/black-coffee.md":  recallMemory("Black Coffee", "Coffee, black, every morning", "A large black coffee every morning, no sugar.", "active"),
		"user_memory/has-dog-pixel.md": recallMemory("Has Dog Pixel", "Has a beagle called Pixel", "You have a beagle named Pixel.", "active"),
	} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got := recallPaths(g.Recall("what does the user drink", recall.Options{})); !slices.Equal(got, []string{"user_memory/black-coffee.md"}) {
		t.Fatalf("got %v, want the coffee memory", got)
	}
}
