package recall

import (
	"reflect"
	"testing"
)

// wordnetFixture is a tiny database in WordNet's format (see package
// wordnet's testdata): drink, beverage, coffee, tea, sip.
const wordnetFixture = "wordnet/testdata"

func drinkIndex() *Index {
	ix := New()
	ix.Put(Doc{Path: "user_memory/drinks-coffee.md", Kind: "user", Active: true,
		Title: "Drinks Coffee", Description: "Drinks coffee every morning", Fact: "You drink two cups of coffee every morning."})
	ix.Put(Doc{Path: "user_memory/black-coffee.md", Kind: "user", Active: true,
		Title: "Black Coffee", Description: "Takes coffee black, no sugar", Fact: "You take your coffee black."})
	ix.Put(Doc{Path: "user_memory/has-dog.md", Kind: "user", Active: true,
		Title: "Has A Dog", Description: "Has a dog named Pixel", Fact: "Your dog Pixel is a beagle."})
	ix.Put(Doc{Path: "user_memory/lives-in-porto.md", Kind: "user", Active: true,
		Title: "Lives In Porto", Description: "Lives in Porto", Fact: "You live in Porto, near the river."})
	return ix
}

// TestExpandDrink: through WordNet, "what does the user drink" finds the
// memory that says "coffee" without the word "drink", below the one that
// says both.
func TestExpandDrink(t *testing.T) {
	ix := drinkIndex()
	q := "what does the user drink"
	if got := paths(ix.Search(q, Options{})); !reflect.DeepEqual(got, []string{"user_memory/drinks-coffee.md"}) {
		t.Fatalf("keywords alone: %v, want only the memory that says drink", got)
	}
	ix.SetExpander(NewWordNetExpander(wordnetFixture))
	got := paths(ix.Search(q, Options{}))
	want := []string{"user_memory/drinks-coffee.md", "user_memory/black-coffee.md"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("with WordNet: %v, want %v", got, want)
	}
	// One query may ask for its own words only, the shared index's
	// expander left as it is.
	if got := paths(ix.Search(q, Options{Literal: true})); !reflect.DeepEqual(got, []string{"user_memory/drinks-coffee.md"}) {
		t.Errorf("Literal with WordNet set: %v, want only the memory that says drink", got)
	}
	if got := paths(ix.Search(q, Options{})); !reflect.DeepEqual(got, want) {
		t.Errorf("after a Literal query: %v, want %v", got, want)
	}
}

// TestExpandAbsentSafe: with no WordNet data the expander changes nothing
// at all: the same hits, in the same order, with the same scores.
func TestExpandAbsentSafe(t *testing.T) {
	plain, expanded := drinkIndex(), drinkIndex()
	expanded.SetExpander(NewWordNetExpander(t.TempDir()))
	for _, q := range []string{"what does the user drink", "coffee", "Where does the user live?", "dog named Pixel", ""} {
		a, b := plain.Search(q, Options{}), expanded.Search(q, Options{})
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%q: %v without data, %v with none installed", q, a, b)
		}
	}
}

func TestNames(t *testing.T) {
	for q, want := range map[string][]string{
		"When did Caroline go to the support group?":  {"carolin"},
		"Caroline went home. Then Melanie's kids ate": {"melani"},
		`Does the user work at "Globex"?`:             {"globex"},
		"what does the user drink":                    nil,
	} {
		var got []string
		for t := range names(q) {
			got = append(got, t)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("names(%q) = %v, want %v", q, got, want)
		}
	}
}

// TestNameInTitle: the memory whose title names the person the question
// asks about outranks one that only mentions the name.
func TestNameInTitle(t *testing.T) {
	ix := New()
	ix.Put(Doc{Path: "user_memory/d1-3.md", Kind: "user", Active: true,
		Title: "Caroline, 8 May 2023", Description: "I went to a support group yesterday and it was so powerful, I met people there who understood me."})
	ix.Put(Doc{Path: "user_memory/d1-4.md", Kind: "user", Active: true,
		Title: "Melanie, 8 May 2023", Description: "Caroline! A support group yesterday, Caroline?"})
	got := paths(ix.Search("What did Caroline go to yesterday, a support group?", Options{}))
	if len(got) != 2 || got[0] != "user_memory/d1-3.md" {
		t.Fatalf("got %v, want Caroline's own turn first", got)
	}
}

// TestFramingWords: the words that phrase a question do not match.
func TestFramingWords(t *testing.T) {
	ix := New()
	ix.Put(Doc{Path: "user_memory/kind.md", Kind: "user", Active: true, Title: "Kind", Description: "Is kind to many people"})
	if got := ix.Search("what kind of music? how many?", Options{}); len(got) != 0 {
		t.Fatalf("framing words matched: %v", paths(got))
	}
}

// TestExpandIrregular: an irregular form the stemmer cannot join to the
// question's word ("drank" for "drink", by WordNet's verb.exc) is found,
// below the memory that says the word itself.
func TestExpandIrregular(t *testing.T) {
	ix := New()
	ix.Put(Doc{Path: "user_memory/drank-at-dinner.md", Kind: "user", Active: true,
		Title: "Dinner", Description: "Drank a glass at dinner", Fact: "You drank a glass at dinner."})
	ix.Put(Doc{Path: "user_memory/drinks-water.md", Kind: "user", Active: true,
		Title: "Water", Description: "Drinks a glass of water at noon", Fact: "You drink water at noon."})
	ix.Put(Doc{Path: "user_memory/has-dog.md", Kind: "user", Active: true,
		Title: "Has A Dog", Description: "Has a dog named Pixel", Fact: "Your dog Pixel is a beagle."})
	q := "what did the user drink"
	if got := paths(ix.Search(q, Options{})); !reflect.DeepEqual(got, []string{"user_memory/drinks-water.md"}) {
		t.Fatalf("keywords alone: %v", got)
	}
	ix.SetExpander(NewWordNetExpander(wordnetFixture))
	want := []string{"user_memory/drinks-water.md", "user_memory/drank-at-dinner.md"}
	if got := paths(ix.Search(q, Options{})); !reflect.DeepEqual(got, want) {
		t.Fatalf("with WordNet's irregular forms: %v, want %v", got, want)
	}
}
