package memgraph

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/engram-dev/engram/memgraph/recall"
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
