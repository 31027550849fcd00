package consolidate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mindmount/mindmount/memgraph"
	"github.com/mindmount/mindmount/memgraph/recall"
	"github.com/mindmount/mindmount/memgraph/secret"
)

// Limits on the search terms and keywords a model may give per fact.
const (
	MaxSearchTerms = 5
	MaxSearchTerm  = 40
	MaxKeywords    = 8
	MaxKeyword     = 24 // runes; longer "words" are ids or blobs, not what a question says
)

// cleanTopic normalises a model's topic ("Home City" -> "home-city") and
// drops it ("") when it still breaks memgraph.ValidTopic: too long, or not
// a name at all. A fact without a topic is consolidated as before.
func cleanTopic(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 2*memgraph.MaxTopicLen || strings.ContainsAny(s, "/\\.") {
		return "" // a path or a sentence is not a topic
	}
	s = strings.ToLower(strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '_' || r == '-' }), "-"))
	if !memgraph.ValidTopic(s) {
		return ""
	}
	return s
}

// cleanSearch keeps at most MaxSearchTerms short one-line terms; paths,
// empty and over-long terms are dropped.
func cleanSearch(in []string) []string {
	var out []string
	for _, t := range in {
		t = strings.Join(strings.Fields(stripControl(strings.ToValidUTF8(t, ""))), " ")
		if t == "" || len([]rune(t)) > MaxSearchTerm || strings.ContainsAny(t, "/\\") || strings.Contains(t, "..") {
			continue
		}
		out = append(out, t)
		if len(out) == MaxSearchTerms {
			break
		}
	}
	return out
}

// cleanKeywords turns a model's keywords (and search terms) into what the
// memory stores as keywords: single lower-case, accent-folded words of
// letters only, as recall reads them (so "Home-City" gives "home" and
// "city"), without stop words, words of one letter or over MaxKeyword,
// and repeats; at most MaxKeywords, first given first kept. No digits: a
// keyword is written to git on its own, where no label says "password"
// before it, so "hunter2" or a PIN would pass the secret scan; a term the
// scan does flag gives no word at all (split into words, a token's pieces
// would no longer look like one to the redaction that runs after parsing).
func cleanKeywords(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range in {
		if _, found := secret.Redact(t); len(found) > 0 {
			continue
		}
		for _, w := range recall.Words(stripControl(strings.ToValidUTF8(t, ""))) {
			n := utf8.RuneCountInString(w)
			if n < 2 || n > MaxKeyword || seen[w] || recall.IsStopWord(w) || strings.ContainsFunc(w, unicode.IsDigit) {
				continue
			}
			seen[w] = true
			out = append(out, w)
			if len(out) == MaxKeywords {
				return out
			}
		}
	}
	return out
}

// mergeKeywords adds a fact's keywords to those a memory has (which a
// person may have written, in any form: they are kept as they are), up to
// MaxKeywords in all; a memory that already has that many gets none.
func mergeKeywords(have, add []string) []string {
	out := slices.Clone(have)
	for _, w := range add {
		if len(out) >= MaxKeywords {
			break
		}
		if !slices.ContainsFunc(out, func(h string) bool { return strings.EqualFold(strings.TrimSpace(h), w) }) {
			out = append(out, w)
		}
	}
	return out
}

// stringsField reads an optional list of strings; a missing or null key is
// an empty list, anything else that is not a list of strings is an error.
func stringsField(m map[string]json.RawMessage, key string) ([]string, error) {
	v, ok := m[key]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal(v, &out); err != nil {
		return nil, fmt.Errorf("%q is not a list of strings", key)
	}
	return out, nil
}
