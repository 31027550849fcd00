package secret_test

import (
	"io/fs"
	"os"
	"path/filepath"
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
	// The repository's test data: imported memories, harness payloads and
	// transcripts, an upgraded repository (fuzz corpora left out).
	for _, dir := range []string{"../testdata", "../../hooks/testdata", "../../hooks/harness/testdata", "../../cmd/mindmount/testdata", "../../fs/migrate/testdata"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "fuzz" {
				return filepath.SkipDir
			}
			if d.Type().IsRegular() {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				texts = append(texts, string(b))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Find is what redaction runs on text; Scan what every commit runs on
	// a file's bytes, decoders included (base64, UTF-16, gzip).
	flagged, scanned, bytes := 0, 0, 0
	for _, x := range texts {
		bytes += len(x)
		if found := secret.Find(x); len(found) > 0 {
			flagged++
			t.Errorf("false positive %v in %q", found, firstLine(x))
		}
		found, err := secret.Scan([]byte(x))
		if err != nil {
			t.Fatal(err)
		}
		if len(found) > 0 {
			scanned++
			t.Errorf("false positive of Scan %v in %q", found, firstLine(x))
		}
	}
	t.Logf("false positives: Find %d, Scan %d of %d texts (%.2f%%, %.2f%%), %d bytes", flagged, scanned, len(texts),
		100*float64(flagged)/float64(len(texts)), 100*float64(scanned)/float64(len(texts)), bytes)
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if len(l) > 80 {
		l = l[:80]
	}
	return l
}
