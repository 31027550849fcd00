package recall

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mindmount/mindmount/memgraph/recall/wordnet"
)

// Expander gives the words related in meaning to one word of a question,
// so that "what does the user drink" reaches a memory that only says
// "coffee". Each related word carries a weight below 1, the weight of the
// question's own words.
type Expander interface {
	Expand(word string) []Expansion
}

// Expansion is one related word and its weight, in (0, 1).
type Expansion struct {
	Word   string
	Weight float64
}

// Weights of WordNet's relations: a synonym is nearly the word itself; a
// more general or more specific word ("beverage", "coffee" for "drink") is
// weaker evidence.
const (
	synonymWeight = 0.3
	relatedWeight = 0.15
	// irregularWeight is an irregular form of the word itself ("chose"
	// for "choose", "children" for "child", by WordNet's exception
	// lists), which the stemmer cannot join: nearly the word itself
	// (LoCoMo's tuning half: MRR 0.567 -> 0.578 at 0.9; 0.5 and 0.7 gave
	// less, 0.99 the same).
	irregularWeight = 0.9
	// expandSenses is how many senses of a word are followed, most
	// frequent first: rarer senses bring more noise than help.
	expandSenses = 3
	// expandPOS are the parts of speech looked up: nouns only. Through
	// nouns "drink" still reaches "coffee" (drink, sense 3: beverage);
	// verbs added noise ("use" at work: cycling to work) and measured worse.
	expandPOS = "n"
	// expandMax bounds the related words of one word.
	expandMax = 256
	// expandCacheMax bounds the words whose expansions are remembered.
	// (a noun relates to a few dozen words: some 100 KB at most).
	expandCacheMax = 512
)

// wordNetExpander expands through a WordNet database, remembering the
// answers for the words asked (a worker asks the same few words often).
type wordNetExpander struct {
	wn    *wordnet.WordNet
	mu    sync.Mutex
	cache map[string][]Expansion
}

// NewWordNetExpander expands query words through the WordNet database in
// dir (see package wordnet), read lazily from disk. A missing database
// expands nothing.
func NewWordNetExpander(dir string) Expander {
	return &wordNetExpander{wn: wordnet.New(dir), cache: map[string][]Expansion{}}
}

func (e *wordNetExpander) Expand(word string) []Expansion {
	e.mu.Lock()
	out, ok := e.cache[word]
	e.mu.Unlock()
	if ok {
		return out
	}
	for _, f := range e.wn.Forms(word) {
		out = append(out, Expansion{Word: f, Weight: irregularWeight})
	}
	for _, r := range e.wn.Related(word, wordnet.Options{Senses: expandSenses, Max: expandMax, POS: expandPOS}) {
		// A multi-word lemma ("ice_cream") is a phrase; its words alone
		// would match unrelated memories.
		if strings.ContainsAny(r.Lemma, "_-. '") {
			continue
		}
		w := relatedWeight
		if r.Rel == wordnet.Synonym {
			w = synonymWeight
		}
		out = append(out, Expansion{Word: r.Lemma, Weight: w})
	}
	e.mu.Lock()
	if len(e.cache) >= expandCacheMax {
		clear(e.cache)
	}
	e.cache[word] = out
	e.mu.Unlock()
	return out
}

// defaultExpander is the process's expander over the installed WordNet.
var defaultExpander = sync.OnceValue(func() Expander {
	if !wordnet.Installed(wordnet.DefaultDir) {
		return nil
	}
	return NewWordNetExpander(wordnet.DefaultDir)
})

// DefaultExpander returns the expander over the WordNet database installed
// at wordnet.DefaultDir, or nil when none is installed.
func DefaultExpander() Expander { return defaultExpander() }

// SetExpander makes searches also look for the words e relates to each
// question word; nil turns expansion off.
func (ix *Index) SetExpander(e Expander) {
	ix.mu.Lock()
	ix.expander = e
	ix.mu.Unlock()
}

// weighted is a search term with its weight.
type weighted struct {
	term string
	w    float64
}

// queryTerm is one distinct term of a question and the terms its word
// expands to.
type queryTerm struct {
	term string
	exp  []weighted
	name bool // the question writes it as a name
}

// names returns the terms of the words q writes as names: capitalised and
// not the first word of a sentence ("When did Caroline go…", "Does the
// user work at Globex?").
func names(q string) map[string]bool {
	out := map[string]bool{}
	start := true // at the start of a sentence
	for _, f := range strings.Fields(q) {
		r, _ := utf8.DecodeRuneInString(strings.TrimLeftFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }))
		if !start && unicode.IsUpper(r) {
			for _, w := range Words(f) {
				if !IsStopWord(w) {
					out[Stem(w)] = true
				}
				break // "Caroline's": the name, not the "s"
			}
		}
		start = strings.ContainsAny(f[len(f)-1:], ".!?:")
	}
	return out
}

// expandQuery returns the distinct terms of q, each with the terms of its
// related words when e is set: stemmed, without the question's own terms
// and stop words, the highest weight kept per term.
func expandQuery(q string, e Expander) []queryTerm {
	var out []queryTerm
	seen := map[string]int{}
	var words []string
	eachWord(q, func(w string) {
		if IsStopWord(w) {
			return
		}
		t := Stem(w)
		if _, ok := seen[t]; ok {
			return
		}
		seen[t] = len(out)
		out = append(out, queryTerm{term: t})
		words = append(words, w)
	})
	for t := range names(q) {
		if i, ok := seen[t]; ok {
			out[i].name = true
		}
	}
	if e == nil {
		return out
	}
	for i, w := range words {
		best := map[string]int{}
		for _, x := range e.Expand(w) {
			if x.Weight <= 0 || x.Weight >= 1 || IsStopWord(x.Word) {
				continue
			}
			t := Stem(x.Word)
			if _, own := seen[t]; own {
				continue
			}
			if j, ok := best[t]; ok {
				out[i].exp[j].w = max(out[i].exp[j].w, x.Weight)
				continue
			}
			best[t] = len(out[i].exp)
			out[i].exp = append(out[i].exp, weighted{t, x.Weight})
		}
	}
	return out
}
