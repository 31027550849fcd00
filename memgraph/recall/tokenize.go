package recall

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// maxTermLen bounds a term in bytes: longer "words" are base64 blobs or
// hashes that nobody searches for, and they would bloat the vocabulary.
const maxTermLen = 64

// extraStopWords are words that phrase a request to memory rather than its
// content ("what do you know about…", "tell me…"), which would otherwise
// match memories that happen to mention knowing or telling. "user" is one
// of them: the user is the subject of every memory, written "you" in the
// memory (a stop word already), so "the user's dog" must weigh "dog" only,
// not favour the memories that happen to say "the user". Words that frame
// a question ("what kind of…", "how many…", "did she mention…", "what
// might…") are of the same sort.
var extraStopWords = map[string]bool{
	"kind": true, "type": true, "many": true, "much": true, "recently": true,
	"describe": true, "mention": true, "mentioned": true, "might": true, "likely": true,
	"user": true, "users": true,
	"also": true, "anything": true, "could": true, "know": true, "knows": true,
	"let": true, "please": true, "recall": true, "remember": true,
	"something": true, "tell": true, "thing": true, "things": true, "would": true,
	"us": true, "ve": true, "ll": true, "re": true, "d": true, "m": true,
	"whose": true,
}

// IsStopWord reports whether the lower-cased word w carries no meaning for
// recall.
func IsStopWord(w string) bool {
	return english.IsStopWord(w) || extraStopWords[w]
}

// foldAccents removes combining marks after canonical decomposition, so
// "café" and "cafe" are the same word.
func foldAccents(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	t := transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
	out, _, err := transform.String(t, s)
	if err != nil {
		return s
	}
	return out
}

// Words splits s into lower-case, accent-folded words: maximal runs of
// unicode letters and digits. Everything else separates words.
func Words(s string) []string {
	var out []string
	eachWord(s, func(w string) { out = append(out, w) })
	return out
}

// eachWord calls fn with every lower-case, accent-folded word of s, without
// allocating for words that are already lower-case.
func eachWord(s string, fn func(w string)) {
	s = foldAccents(s)
	start := -1
	flush := func(end int) {
		if start >= 0 {
			if end-start <= maxTermLen {
				fn(strings.ToLower(s[start:end]))
			}
			start = -1
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			// ASCII fast path.
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
				if start < 0 {
					start = i
				}
			} else {
				flush(i)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
		} else {
			flush(i)
		}
		i += n
	}
	flush(len(s))
}

// stemCache remembers stems: a repository's vocabulary repeats, and
// Snowball costs a microsecond or more per word, the largest part of a Put.
// It stops growing at stemCacheMax words so odd input cannot bloat it.
var (
	stemMu    sync.RWMutex
	stemCache = map[string]string{}
)

const stemCacheMax = 200_000

// Stem returns the search term for one lower-case word.
func Stem(w string) string {
	// Snowball's English rules only make sense for Latin letters; other
	// scripts are kept as they are.
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return w
		}
	}
	stemMu.RLock()
	s, ok := stemCache[w]
	stemMu.RUnlock()
	if ok {
		return s
	}
	s = english.Stem(w, true)
	stemMu.Lock()
	if len(stemCache) < stemCacheMax {
		stemCache[strings.Clone(w)] = s
	}
	stemMu.Unlock()
	return s
}

// Terms turns text into the terms the index stores: words without stop
// words, stemmed.
func Terms(s string) []string {
	var out []string
	eachTerm(s, func(t string) { out = append(out, t) })
	return out
}

func eachTerm(s string, fn func(t string)) {
	eachWord(s, func(w string) {
		if !IsStopWord(w) {
			fn(Stem(w))
		}
	})
}
