package recall

import (
	"slices"
	"testing"
)

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"José's Café", []string{"jose", "s", "cafe"}},
		{"B12 vitamins; 2024-05-01", []string{"b12", "vitamins", "2024", "05", "01"}},
		{"naïve résumé", []string{"naive", "resume"}},
		{"東京 tower", []string{"東京", "tower"}},
		{"snake_case-and/slashes", []string{"snake", "case", "and", "slashes"}},
		{"   \n\t ", nil},
	}
	for _, tt := range tests {
		if got := Words(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"What do you know about the user's allergies?", []string{"allergi"}},
		{"allergic", []string{"allerg"}},
		{"running runs ran", []string{"run", "run", "ran"}},
		{"The dogs are barking", []string{"dog", "bark"}},
		{"Ethiopian coffee", []string{"ethiopian", "coffe"}},
		{"Tell me something", nil},
		{"Café Müller", []string{"cafe", "muller"}},
	}
	for _, tt := range tests {
		if got := Terms(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStemConflatesInflections(t *testing.T) {
	pairs := [][2]string{
		{"allergies", "allergy"},
		{"hiking", "hikes"},
		{"vegetarian", "vegetarians"},
		{"programming", "programs"},
		{"cooked", "cooking"},
	}
	for _, p := range pairs {
		if a, b := Stem(p[0]), Stem(p[1]); a != b {
			t.Errorf("Stem(%q)=%q, Stem(%q)=%q: want equal", p[0], a, p[1], b)
		}
	}
}

func TestSentences(t *testing.T) {
	got := sentences("First one. Second one! Third?\n- a list item\nv1.2 stays whole.")
	want := []string{"First one.", "Second one!", "Third?", "a list item", "v1.2 stays whole."}
	if !slices.Equal(got, want) {
		t.Errorf("sentences = %q, want %q", got, want)
	}
}
