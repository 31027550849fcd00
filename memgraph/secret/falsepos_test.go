package secret_test

import (
	"io/fs"
	"strings"
	"testing"

	cgolden "github.com/mindmount/mindmount/consolidate/golden"
	rgolden "github.com/mindmount/mindmount/memgraph/recall/golden"
	"github.com/mindmount/mindmount/memgraph/secret"
	"github.com/mindmount/mindmount/template"
)

// TestFalsePositivesOnGoldenSets (issue 23, item 7) measures how often the
// rules flag ordinary memory text: every memory and question of the recall
// golden set, 2000 of its synthetic distractor memories, the consolidation
// scenarios and the new-repository template. The rate is logged; the goal,
// and the bar, is 0.
func TestFalsePositivesOnGoldenSets(t *testing.T) {
	var texts []string
	err := fs.WalkDir(rgolden.Embedded(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(rgolden.Embedded(), p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".tsv") {
			texts = append(texts, strings.Split(string(b), "\n")...)
			return nil
		}
		texts = append(texts, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range rgolden.Distractors(2000, 1) {
		texts = append(texts, d.Title+"\n"+d.Description+"\n"+d.Fact+"\n"+d.Episode)
	}
	for _, s := range cgolden.Scenarios {
		texts = append(texts, s.Say, s.Old.Description+"\n"+s.Old.Fact, s.Fact.Description+"\n"+s.Fact.Fact)
	}
	err = fs.WalkDir(template.Files(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(template.Files(), p)
		if err == nil {
			texts = append(texts, string(b))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	flagged, bytes := 0, 0
	for _, x := range texts {
		bytes += len(x)
		if found := secret.Find(x); len(found) > 0 {
			flagged++
			t.Errorf("false positive %v in %q", found, firstLine(x))
		}
	}
	t.Logf("false positives: %d of %d texts (%.2f%%), %d bytes", flagged, len(texts), 100*float64(flagged)/float64(len(texts)), bytes)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if len(l) > 80 {
		l = l[:80]
	}
	return l
}
