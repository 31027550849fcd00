package wordnet

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testdata holds a tiny database in WordNet's format, written for these
// tests (the offsets are the byte offsets of its data lines).
const fixture = "testdata"

func lemmas(rs []Related, rel Relation) []string {
	var out []string
	for _, r := range rs {
		if r.Rel == rel {
			out = append(out, r.Lemma)
		}
	}
	return out
}

func TestRelated(t *testing.T) {
	w, err := Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, tc := range []struct {
		word     string
		rel      Relation
		want     string
		inflects bool
	}{
		{"drink", Synonym, "beverage", false}, // noun sense 2
		{"drink", Synonym, "imbibe", false},   // the verb
		{"drink", Hyponym, "coffee", false},   // beverage -> coffee
		{"drink", Hyponym, "sip", false},      // the verb's hyponym
		{"drinks", Hyponym, "coffee", true},   // a detachment rule
		{"drank", Synonym, "imbibe", true},    // verb.exc
		{"coffee", Hypernym, "beverage", false},
		{"coffee", Synonym, "java", false},
	} {
		got := w.Related(tc.word, Options{})
		if !slices.Contains(lemmas(got, tc.rel), tc.want) {
			t.Errorf("Related(%q): %v lacks %q as relation %d", tc.word, got, tc.want, tc.rel)
		}
		for _, r := range got {
			if r.Lemma == tc.word {
				t.Errorf("Related(%q) returns the word itself", tc.word)
			}
		}
	}
	if got := w.Related("drink", Options{Senses: 1, POS: "n"}); slices.Contains(lemmas(got, Hyponym), "coffee") {
		t.Errorf("Senses 1 followed the second sense of drink: %v", got)
	}
	for _, q := range []string{"unknown", "", "two words", "beverag", "  1"} {
		if got := w.Related(q, Options{}); len(got) != 0 {
			t.Errorf("Related(%q) = %v, want nothing", q, got)
		}
	}
}

// TestAbsent: a missing database answers nothing and says so.
func TestAbsent(t *testing.T) {
	dir := t.TempDir()
	if Installed(dir) {
		t.Fatal("an empty directory reads as installed")
	}
	if _, err := Open(dir); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Open: %v, want ErrNotInstalled", err)
	}
	if got := New(filepath.Join(dir, "nowhere")).Related("drink", Options{}); got != nil {
		t.Fatalf("Related without a database: %v", got)
	}
}

// TestSearchLine finds every line of a real index, first and last
// included, and nothing between them.
func TestSearchLine(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixture, "index.noun"))
	if err != nil {
		t.Fatal(err)
	}
	f := &file{r: bytes.NewReader(data), size: int64(len(data))}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 || line[0] == ' ' {
			continue
		}
		key := string(bytes.Fields(line)[0])
		if got := searchLine(f, key); !bytes.Equal(got, line) {
			t.Errorf("searchLine(%q) = %q", key, got)
		}
		if got := searchLine(f, key+"x"); got != nil {
			t.Errorf("searchLine(%q) = %q, want nil", key+"x", got)
		}
	}
}

func FuzzSearchLine(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join(fixture, "index.noun"))
	f.Add(data, "drink")
	f.Add([]byte("a\nb\nc"), "c")
	f.Add([]byte("\n\n\n"), "")
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		fl := &file{r: bytes.NewReader(data), size: int64(len(data))}
		if got := searchLine(fl, key); got != nil && compareKey(got, key) != 0 {
			t.Fatalf("searchLine(%q) = %q", key, got)
		}
		indexOffsets(readLine(fl, 0))
	})
}

func FuzzParseSynset(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join(fixture, "data.noun"))
	for _, l := range bytes.Split(data, []byte("\n")) {
		f.Add(l)
	}
	f.Add([]byte("00000001 00 n ff a 0 999 @"))
	f.Fuzz(func(t *testing.T, line []byte) {
		s, ok := parseSynset(line)
		if !ok && (len(s.words) > 0 || len(s.ptrs) > 0) {
			t.Fatalf("not ok, yet %+v", s)
		}
		for _, p := range s.ptrs {
			if p.off < 0 {
				t.Fatalf("negative offset %+v", p)
			}
		}
		indexOffsets(line)
	})
}

// TestForms: an irregular form gives its base and the base's other
// irregular forms, a base its irregular forms (by verb.exc); a regular
// word, an unknown one and a missing database give nothing.
func TestForms(t *testing.T) {
	w, err := Open(fixture)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for word, want := range map[string][]string{
		"drink":  {"drank", "drunk"},
		"drank":  {"drink", "drunk"},
		"Drunk ": {"drink", "drank"},
		"coffee": nil,
		"zzz":    nil,
		"":       nil,
	} {
		if got := w.Forms(word); !slices.Equal(got, want) {
			t.Errorf("Forms(%q) = %v, want %v", word, got, want)
		}
	}
	if got := New(t.TempDir()).Forms("drink"); got != nil {
		t.Errorf("no database: %v", got)
	}
}

// FuzzForms: whatever verb.exc holds, Forms neither fails nor returns the
// asked word, an empty word or a multi-word lemma.
func FuzzForms(f *testing.F) {
	f.Add([]byte("drank drink\ndrunk drink\n"), "drink")
	f.Add([]byte("went go go_deep\n\n x\n"), "went")
	f.Fuzz(func(t *testing.T, exc []byte, word string) {
		dir := t.TempDir()
		for _, n := range []string{"index.noun", "data.noun", "index.verb", "data.verb"} {
			b, err := os.ReadFile(filepath.Join(fixture, n))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, n), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "verb.exc"), exc, 0o600); err != nil {
			t.Fatal(err)
		}
		w := New(dir)
		defer w.Close()
		for _, got := range w.Forms(word) {
			if got == "" || got == strings.ToLower(strings.TrimSpace(word)) || strings.ContainsAny(got, "_- \n") {
				t.Fatalf("Forms(%q) holds %q", word, got)
			}
		}
	})
}
